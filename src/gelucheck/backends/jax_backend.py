"""JAX on the CPU: jax.nn.gelu in both forms (the tanh form is its default) and norm.cdf."""
from __future__ import annotations

import numpy as np

from .base import Backend, Implementation


def load() -> Backend:
    try:
        import jax
    except ImportError as exc:
        return Backend("jax", False, f"jax is not installed ({exc}); pip install "
                       "'gelucheck[jax]'", None)
    jax.config.update("jax_enable_x64", True)  # else float64 input is silently float32
    import jax.numpy as jnp
    from jax.scipy.stats import norm

    def kernel(fn):
        jitted = jax.jit(fn)
        return lambda x: np.asarray(jitted(jnp.asarray(x)))

    def prepare(fn):
        jitted = jax.jit(fn)
        # block_until_ready: JAX dispatches asynchronously, the timing must include the work
        return lambda x: (lambda a: jitted(a).block_until_ready(), jnp.asarray(x))

    def exact(x):
        return jax.nn.gelu(x, approximate=False)

    def tanh(x):
        return jax.nn.gelu(x, approximate=True)

    def gradient(fn):
        """d/dx by jax.grad of the scalar function, over the array with jax.vmap."""
        return jax.vmap(jax.grad(fn))

    impls = (
        Implementation("jax", "nn.gelu", "gelu", kernel(exact), prepare=prepare(exact),
                       description="jax.nn.gelu(x, approximate=False)"),
        Implementation("jax", "nn.gelu", "gelu_tanh", kernel(tanh), prepare=prepare(tanh),
                       description="jax.nn.gelu(x) - approximate=True is the default"),
        # norm.cdf raises TypeError for float16 and bfloat16 ("not supported")
        Implementation("jax", "norm.cdf", "phi", kernel(norm.cdf), native=("float32", "float64"),
                       prepare=prepare(norm.cdf),
                       description="jax.scipy.stats.norm.cdf(x); refuses float16 and bfloat16"),
        Implementation("jax", "nn.gelu", "gelu_grad", kernel(gradient(exact)),
                       prepare=prepare(gradient(exact)),
                       description="jax.vmap(jax.grad(jax.nn.gelu(x, approximate=False)))"),
        Implementation("jax", "nn.gelu", "gelu_tanh_grad", kernel(gradient(tanh)),
                       prepare=prepare(gradient(tanh)),
                       description="jax.vmap(jax.grad(jax.nn.gelu(x, approximate=True)))"),
        Implementation("jax", "norm.cdf", "phi_grad", kernel(gradient(norm.cdf)),
                       native=("float32", "float64"), prepare=prepare(gradient(norm.cdf)),
                       description="jax.vmap(jax.grad(jax.scipy.stats.norm.cdf))"),
    )
    return Backend("jax", True, "", jax.__version__, impls)

"""JAX on the CPU: jax.nn.gelu in both forms (the tanh form is its default), norm.cdf, and
erf and erfc (lax and jax.scipy.special); each jitted, and op by op as a consistency path."""
from __future__ import annotations

import numpy as np

from .. import tiers
from .base import Backend, Implementation


def load() -> Backend:
    try:
        import jax
    except ImportError as exc:
        return Backend("jax", False, f"jax is not installed ({exc}); pip install "
                       "'gelucheck[jax]'", None)
    jax.config.update("jax_enable_x64", True)  # else float64 input is silently float32
    import jax.numpy as jnp
    import jax.scipy.special
    from jax.scipy.stats import norm

    def kernel(fn):
        jitted = jax.jit(fn)
        return lambda x: np.asarray(jitted(jnp.asarray(x)))

    def eager(fn):
        """The consistency check's other path: the same function op by op, without jax.jit
        (XLA compiles each op alone, so fusion and its rounding can differ)."""
        return lambda fmt: {"without-jit": lambda x: np.asarray(fn(jnp.asarray(x)))}

    def prepare(fn):
        jitted = jax.jit(fn)
        # block_until_ready: JAX dispatches asynchronously, the timing must include the work
        return lambda x: (lambda a: jitted(a).block_until_ready(), jnp.asarray(x))

    def exact(x):
        return jax.nn.gelu(x, approximate=False)

    def tanh(x):
        return jax.nn.gelu(x, approximate=True)

    def gradient(fn):
        """d/dx by jax.grad of the scalar function, over the array with jax.vmap; a 0-d array
        is that scalar (vmap has no axis to map there)."""
        grad, mapped = jax.grad(fn), jax.vmap(jax.grad(fn))
        return lambda x: grad(x) if jnp.ndim(x) == 0 else mapped(x)

    def make(name, function, fn, text, native=None):
        extra = {"native": native} if native else {}
        return Implementation("jax", name, function, kernel(fn), paths=eager(fn),
                              prepare=prepare(fn), description=text, **extra)

    narrow_free = ("float32", "float64")  # norm.cdf refuses float16/bfloat16 (TypeError)
    impls = (
        make("nn.gelu", "gelu", exact, "jax.nn.gelu(x, approximate=False)"),
        make("nn.gelu", "gelu_tanh", tanh, "jax.nn.gelu(x) - approximate=True is the default"),
        make("norm.cdf", "phi", norm.cdf,
             "jax.scipy.stats.norm.cdf(x); refuses float16 and bfloat16", narrow_free),
        make("nn.gelu", "gelu_grad", gradient(exact),
             "jax.vmap(jax.grad(jax.nn.gelu(x, approximate=False)))"),
        make("nn.gelu", "gelu_tanh_grad", gradient(tanh),
             "jax.vmap(jax.grad(jax.nn.gelu(x, approximate=True)))"),
        make("norm.cdf", "phi_grad", gradient(norm.cdf),
             "jax.vmap(jax.grad(jax.scipy.stats.norm.cdf))", narrow_free),
        make("lax.erf", "erf", jax.lax.erf, "jax.lax.erf(x), jit"),
        make("lax.erfc", "erfc", jax.lax.erfc, "jax.lax.erfc(x), jit"),
        make("special.erf", "erf", jax.scipy.special.erf, "jax.scipy.special.erf(x), jit"),
        make("special.erfc", "erfc", jax.scipy.special.erfc, "jax.scipy.special.erfc(x), jit"),
    )
    tier = tiers.xla_tier()
    return Backend("jax", True, "", f"{jax.__version__}, kernels {tier}", impls, tier=tier)

"""MLX on the CPU (Linux needs the extra mlx[cpu]): mlx.nn.gelu (exact), gelu_approx (the
tanh form; also what nn.GELU(approx="precise") computes), gelu_fast_approx (x·σ(1.702x)), and
their derivatives through mx.grad.

MLX makes float32 of a float64 NumPy array unless told the dtype, so inputs are converted
with theirs; bfloat16 has no NumPy buffer format in MLX, so it comes back through float32
(exact both ways)."""
from __future__ import annotations

import numpy as np

from .base import Backend, Implementation


def load() -> Backend:
    try:
        import mlx.core as mx
        import mlx.nn as nn
    except ImportError as exc:  # on Linux, also a missing libmlx.so (the CPU runtime)
        return Backend("mlx", False, f"mlx cannot be imported ({exc}); pip install "
                       "'gelucheck[mlx]' (mlx[cpu] on Linux)", None)

    def to_mx(x: np.ndarray):
        return mx.array(x, dtype=getattr(mx, x.dtype.name))

    def run(fn):
        def kernel(x):
            with mx.stream(mx.cpu):
                y = fn(to_mx(x))
                if x.dtype.name == "bfloat16":
                    return np.array(y.astype(mx.float32)).astype(x.dtype)
                return np.array(y)
        return kernel

    def gradient(fn):
        """d/dx with grad_out = 1: the gradient of the sum (elementwise functions)."""
        return mx.grad(lambda t: fn(t).sum())

    def prepare(fn):
        def call(a):
            mx.eval(fn(a))  # MLX is lazy: the timing must include the work
        return lambda x: (call, to_mx(x))

    def make(name, function, fn, text, **extra):
        return Implementation("mlx", name, function, run(fn), description=text,
                              prepare=prepare(fn), **extra)

    precise = nn.GELU(approx="precise")
    impls: tuple[Implementation, ...] = (
        make("nn.gelu", "gelu", nn.gelu, "mlx.nn.gelu: x*(1+erf(x/sqrt 2))/2, mx.compile'd"),
        make("nn.gelu_approx", "gelu_tanh", nn.gelu_approx, "mlx.nn.gelu_approx (tanh form)"),
        make("nn.GELU[precise]", "gelu_tanh", precise,
             "mlx.nn.GELU(approx='precise'): documented as the tanh form"),
        make("nn.gelu_fast_approx", "gelu", nn.gelu_fast_approx,
             "mlx.nn.gelu_fast_approx: x*sigmoid(1.702x)", approximates="gelu",
             formula="sigmoid_1.702"),
        make("nn.gelu", "gelu_grad", gradient(nn.gelu), "mx.grad of mlx.nn.gelu"),
        make("nn.gelu_approx", "gelu_tanh_grad", gradient(nn.gelu_approx),
             "mx.grad of mlx.nn.gelu_approx"),
        make("erf", "erf", mx.erf, "mlx.core.erf(x)"),
    )
    missing = {name: "MLX has no Gaussian CDF op (erf is there; GELU is measured)"
               for name in ("phi", "phi_grad")}
    if hasattr(mx, "erfc"):
        impls += (make("erfc", "erfc", mx.erfc, "mlx.core.erfc(x)"),)
    else:
        missing["erfc"] = f"MLX {mx.__version__} has no erfc op"
    return Backend("mlx", True, "", mx.__version__, impls, missing)

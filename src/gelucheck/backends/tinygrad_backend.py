"""tinygrad on its CPU device (the ``tinygrad`` extra; its CPU device compiles C with clang,
Debian's ``clang``): ``Tensor.gelu`` - whose default is the tanh form, approximate="tanh" -
and ``gelu(approximate="none")``, ``quick_gelu`` (x·σ(1.702x)), ``erf``, and the derivatives
of both GELU forms through tinygrad's autograd. Its erf is Abramowitz and Stegun's 7.1.26
(read from tinygrad's tensor.py), good to about 1.5e-7 absolute in every dtype.

Not its Python emulator device, which is not what users run. bfloat16 is computed natively:
the inputs enter as float32 and are cast on the device (exact), the outputs cast back."""
from __future__ import annotations

import numpy as np

from .base import Backend, Implementation, warm_up_on_a_few_inputs

DEVICE = "CPU"


def load() -> Backend:
    try:
        from importlib.metadata import version

        from tinygrad import Device, Tensor, dtypes
    except ImportError as exc:
        return Backend("tinygrad", False, f"tinygrad is not installed ({exc}); pip install "
                       "'gelucheck[tinygrad]'", None)
    try:
        Device[DEVICE]  # its compiler: clang
    except Exception as exc:  # noqa: BLE001 - tinygrad says why in its own words
        return Backend("tinygrad", False, f"tinygrad's CPU device does not start ({exc}); it "
                       "compiles with clang: apt-get install clang", None)

    def tensor(x: np.ndarray):
        if x.dtype.name == "bfloat16":
            return Tensor(x.astype(np.float32), device=DEVICE).cast(dtypes.bfloat16)
        return Tensor(x, device=DEVICE)

    def back(y, like: np.ndarray) -> np.ndarray:
        if like.dtype.name == "bfloat16":
            return y.cast(dtypes.float32).numpy().astype(like.dtype)
        return y.numpy()

    def forward(fn):
        return lambda x: back(fn(tensor(x)), x)

    def gradient(fn):
        """d/dx with grad_out = 1: the gradient of the sum (elementwise functions)."""
        def kernel(x: np.ndarray) -> np.ndarray:
            t = tensor(x)
            t.requires_grad = True
            fn(t).sum().backward()
            return back(t.grad, x)
        return kernel

    def make(name, function, fn, text, grad=False, **extra):
        kernel = gradient(fn) if grad else forward(fn)
        # (tinygrad compiles its kernels for the dtype, then again for each new length: why
        # report leaves it out by default, as it does torch.compile)
        return Implementation("tinygrad", name, function, kernel, description=text,
                              warm_up=warm_up_on_a_few_inputs(kernel), **extra)

    exact = lambda t: t.gelu(approximate="none")
    tanh = lambda t: t.gelu()  # its default: the tanh form
    impls = (
        make("gelu(none)", "gelu", exact, "Tensor.gelu(approximate='none'): "
             "x*0.5*(1+erf(x/sqrt 2)), erf by Abramowitz-Stegun 7.1.26"),
        make("gelu", "gelu_tanh", tanh, "Tensor.gelu(): its default is the tanh form "
             "(approximate='tanh')"),
        make("quick_gelu", "gelu", lambda t: t.quick_gelu(), "Tensor.quick_gelu(): "
             "x*sigmoid(1.702x)", approximates="gelu", formula="sigmoid_1.702"),
        make("erf", "erf", lambda t: t.erf(), "Tensor.erf(): Abramowitz-Stegun 7.1.26, "
             "|error| < 1.5e-7"),
        make("gelu(none)", "gelu_grad", exact, "backward() of gelu(approximate='none')",
             grad=True),
        make("gelu", "gelu_tanh_grad", tanh, "backward() of gelu() (the tanh form)", grad=True),
    )
    missing = {name: "tinygrad has erf, not the Gaussian CDF or erfc"
               for name in ("phi", "phi_grad", "erfc")}
    return Backend("tinygrad", True, "", f"{version('tinygrad')} (device {DEVICE}, clang)",
                   impls, missing)

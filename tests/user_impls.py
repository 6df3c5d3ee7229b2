"""Users' own implementations, good and bad, for the --impl tests."""
import numpy as np
from scipy import special


def gelu_float64_then_round(x):
    """x·ndtr(x) computed in float64 and converted back: correct to within a rounding."""
    from gelucheck.formats import narrow

    return narrow(x.astype(np.float64) * special.ndtr(x.astype(np.float64)), x.dtype.name)


def raises(x):
    raise RuntimeError("kernel exploded")


def all_nan(x):
    return np.full_like(x, np.nan)


def wrong_dtype(x):
    return x.astype(np.float64)


def wrong_shape(x):
    return x[:1]


def torch_gelu(t):
    import torch

    return torch.nn.functional.gelu(t)


def torch_gelu_one_ulp_up_in_band(t):
    """A torch callable whose errors are known without torch's kernels: x·ndtr(x) rounded
    once, then one ulp up for -5 <= x < -1 - errors within 1/2 ulp outside that band, from
    1/2 to 3/2 inside it (torch's own GELU differs by kernel tier: 2.04 ulps in float16 on
    ATen's kernels, 5.8 on oneDNN's where the CPU has AVX-512 FP16)."""
    import torch

    y = torch.from_numpy(gelu_float64_then_round(t.numpy()))
    up = torch.nextafter(y, torch.tensor(float("inf"), dtype=y.dtype))
    return torch.where((t >= -5) & (t < -1), up, y)


not_callable = 3


def gelu_in_place_numpy(x):
    """Overwrites its input with the result (as an in-place kernel would) and returns it."""
    x[...] = gelu_float64_then_round(x)
    return x


def gelu_in_place_torch(t):
    """x·Φ(x) written into its input tensor (which shares memory with the NumPy array)."""
    import torch

    return t.mul_(torch.special.ndtr(t))


def never_returns(x):
    import time

    while True:
        time.sleep(1)


def aborts(x):
    import os
    import sys

    print("about to abort", file=sys.stderr, flush=True)
    os.abort()


def segfaults(x):
    import ctypes

    return ctypes.string_at(0)


def tanh_form_posing_as_gelu(x):
    """The tanh form (in float64, rounded once) - to be declared as exact GELU: the kind of
    swap a converter makes while a loose tolerance hides it."""
    from gelucheck.formats import narrow

    w = x.astype(np.float64)
    return narrow(0.5 * w * (1 + np.tanh(np.sqrt(2 / np.pi) * (w + 0.044715 * w**3))),
                  x.dtype.name)

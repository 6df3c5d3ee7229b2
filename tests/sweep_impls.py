"""Implementations for the sweep tests: correct by construction, and one planted error."""
import numpy as np
from scipy import special

from gelucheck.formats import narrow

PLANTED = 0x3F812345  # the one encoding where `planted` is wrong
# where `planted_tiny` is wrong: x near 2^-40, where GELU's results follow in closed form -
# inside a run of spans, not in its first
PLANTED_TINY = 0x2B912345
CALLS = []  # the first encoding of each call of the *_tiny implementations


def overflows_from_2p127(x):
    """rounded_once, but +inf from x = 2^127 up, as an x·(1+erf(x/√2)) computed before the
    0.5 overflows there - a planted defect, so that a test of the figures does not depend on
    any framework keeping (or fixing) its own."""
    y = rounded_once(x)
    y[x >= np.float32(2.0**127)] = np.inf
    return y


def infinite(x):
    """+inf at every input: every error infinite (a NaN or inf where the value is finite)."""
    return np.full_like(x, np.inf)


def rounded_once(x):
    """x·ndtr(x) in float64, rounded once: off only where float64 cannot decide a near-tie."""
    x64 = x.astype(np.float64)
    return narrow(x64 * special.ndtr(x64), "float32")


def planted(x):
    y = rounded_once(x)
    hit = x.view(np.uint32) == PLANTED
    y[hit] = np.nextafter(y[hit], np.float32(np.inf))  # one ulp up, at one input
    return y


def dies_once(x):
    """rounded_once, except that the process dies (SIGKILL) at the planted encoding while the
    file named by $GELUCHECK_TEST_DIE_ONCE exists (removed first, so a rerun lives)."""
    import os
    import signal

    marker = os.environ.get("GELUCHECK_TEST_DIE_ONCE", "")
    if marker and os.path.exists(marker) and np.any(x.view(np.uint32) == PLANTED):
        os.remove(marker)
        os.kill(os.getpid(), signal.SIGKILL)
    return rounded_once(x)


def refuses_torch(x):
    """rounded_once, in a process that has not imported torch: raises where it has (a worker
    of a sweep of NumPy code should not pay for importing torch)."""
    import sys

    if "torch" in sys.modules:
        raise RuntimeError("torch is loaded in a worker of a sweep without torch")
    return rounded_once(x)


def maybe_planted(x):
    """rounded_once, or `planted` when $GELUCHECK_TEST_PLANT is set: the same code (so the
    same source digest) before and after a regression."""
    import os

    return planted(x) if os.environ.get("GELUCHECK_TEST_PLANT") else rounded_once(x)


def planted_here(x):
    """rounded_once, or `planted` where the working directory holds a file named PLANT."""
    import os

    return planted(x) if os.path.exists("PLANT") else rounded_once(x)


def _float64(function, x):
    """Φ, GELU, φ or GELU′ by their float64 formulas (SciPy's ndtr, NumPy's exp)."""
    density = np.exp(-0.5 * x * x) / np.sqrt(2 * np.pi)
    return {"phi": lambda: special.ndtr(x), "gelu": lambda: x * special.ndtr(x),
            "gelu_tanh": lambda: x / (1 + np.exp(-2 * np.sqrt(2 / np.pi)
                                                 * (x + 0.044715 * x**3))),
            "phi_grad": lambda: density, "gelu_grad": lambda: special.ndtr(x) + x * density,
            "gelu_tanh_grad": lambda: _tanh_grad(x)}[function]()


def _tanh_grad(x):
    """The tanh form's derivative, (1 + T)/2 + x(1 - T²)u′/2, by NumPy's tanh."""
    k, a = np.sqrt(2 / np.pi), 0.044715
    t = np.tanh(k * (x + a * x**3))
    return (1 + t) / 2 + x * (1 - t * t) * k * (1 + 3 * a * x * x) / 2


def _rounded(x, function):
    """The function in float64 (_float64), rounded once to float32."""
    return narrow(_float64(function, x.astype(np.float64)), "float32")


def _off(x, function):
    """One ulp up at every 7th input, one down at every 11th."""
    y = _rounded(x, function)
    y[::7] = np.nextafter(y[::7], np.float32(np.inf))
    y[::11] = np.nextafter(y[::11], np.float32(-np.inf))
    return y


def _broken(x, function):
    """A NaN at every 1000th input, a zero at every 13th, infinity at every 4099th."""
    y = _rounded(x, function)
    y[::13] = 0
    y[::1000] = np.nan
    y[::4099] = np.inf
    return y


def rounded_phi(x):
    return _rounded(x, "phi")


def rounded_gelu(x):
    return _rounded(x, "gelu")


def strided_gelu(x):
    """rounded_gelu's outputs as a strided view: a column of a wider array."""
    y = rounded_gelu(x)
    wide = np.zeros((len(y), 3), dtype=y.dtype)
    wide[:, 1] = y
    return wide[:, 1]


def off_phi(x):
    return _off(x, "phi")


def off_gelu(x):
    return _off(x, "gelu")


def broken_phi(x):
    return _broken(x, "phi")


def broken_gelu(x):
    return _broken(x, "gelu")


def rounded_gelu_tanh(x):
    return _rounded(x, "gelu_tanh")


def off_gelu_tanh(x):
    return _off(x, "gelu_tanh")


def broken_gelu_tanh(x):
    return _broken(x, "gelu_tanh")


def rounded_gelu_tanh_grad(x):
    return _rounded(x, "gelu_tanh_grad")


def off_gelu_tanh_grad(x):
    return _off(x, "gelu_tanh_grad")


def broken_gelu_tanh_grad(x):
    return _broken(x, "gelu_tanh_grad")


def rounded_phi_grad(x):
    return _rounded(x, "phi_grad")


def off_phi_grad(x):
    return _off(x, "phi_grad")


def broken_phi_grad(x):
    return _broken(x, "phi_grad")


def rounded_gelu_grad(x):
    return _rounded(x, "gelu_grad")


def off_gelu_grad(x):
    return _off(x, "gelu_grad")


def broken_gelu_grad(x):
    return _broken(x, "gelu_grad")


def in_place_gelu(x):
    """rounded_gelu written over its input, then returned: the sweep hands a block's inputs
    over without a copy, so this must be caught and must not reach the next implementation."""
    x[...] = rounded_gelu(x)
    return x


def returns_its_input(x):
    """x itself: outputs in the memory of the inputs, which the sweep must not rewrite (as
    the next block's inputs) before it has measured them."""
    return x


def planted_tiny(x):
    """rounded_gelu, one ulp up at PLANTED_TINY; each call's first encoding in CALLS."""
    CALLS.append(int(x.view(np.uint32)[0]))
    y = rounded_gelu(x)
    hit = x.view(np.uint32) == PLANTED_TINY
    y[hit] = np.nextafter(y[hit], np.float32(np.inf))
    return y


def raises_at_planted_tiny(x):
    """rounded_gelu, but an error where x holds PLANTED_TINY; each call's first encoding in
    CALLS."""
    CALLS.append(int(x.view(np.uint32)[0]))
    if np.any(x.view(np.uint32) == PLANTED_TINY):
        raise ValueError("planted error")
    return rounded_gelu(x)


def _libm(name):
    from gelucheck.backends import find

    return find(f"libm:{name}")[0]


def erf_scipy_once(x):
    """SciPy's double erf rounded once to float32: correctly rounded but for near-ties."""
    return narrow(special.erf(x.astype(np.float64)), "float32")


def erfc_scipy_once(x):
    return narrow(special.erfc(x.astype(np.float64)), "float32")


def _one_up_every_fifth(x, y):
    """y one ulp up at every fifth input, chosen by the input's place in its binade: the
    same outputs however a sweep splits its calls, and alike in every binade (replays)."""
    fifth = (x.view(np.uint32) & np.uint32(0x7FFFFF)) % 5 == 0
    y[fifth] = np.nextafter(y[fifth], np.float32(np.inf))
    return y


def erff_one_up(x):
    """The C library's erff, one ulp up at every fifth input."""
    return _one_up_every_fifth(x, _libm("erff")(x))


def erfcf_one_up(x):
    return _one_up_every_fifth(x, _libm("erfcf")(x))


# where `erff_planted_binade` is wrong: x = 1.25·2^-86, in erf's part below 2^-30 - a binade
# whose block would otherwise replay an earlier binade's (sweep/replay.py)
PLANTED_BINADE = 0x14A00000


def erff_planted_binade(x):
    """The C library's erff, one ulp up at PLANTED_BINADE alone."""
    y = _libm("erff")(x)
    hit = x.view(np.uint32) == PLANTED_BINADE
    y[hit] = np.nextafter(y[hit], np.float32(np.inf))
    return y


def erf_as_x(x):
    """x itself for erf: it scales with x, but lies far from 2x/√π (every output 11% low)."""
    return x.copy()


def _read_only(y):
    """y handed back read-only, as NumPy views JAX's outputs: numba compiles a loop for
    read-only arrays apart."""
    y.flags.writeable = False
    return y


def erf_scipy_once_read_only(x):
    return _read_only(erf_scipy_once(x))


def erf_as_x_read_only(x):
    return _read_only(erf_as_x(x))


def all_nan(x):
    """NaN for every input: a block of an implementation's overflow."""
    return np.full(len(x), np.nan, dtype=np.float32)


def nan_but_last(x):
    """NaN for every input but the last, which is 0."""
    y = all_nan(x)
    y[-1] = 0
    return y


def all_inf(x):
    """+inf for every input: torch's GELU from 2^127 on."""
    return np.full(len(x), np.inf, dtype=np.float32)


def inf_then_nan(x):
    """-inf, then NaN from the 7th input on in every 5th, the rest +inf: the largest |y - v|
    is the first NaN's, not the first output's."""
    y = all_inf(x)
    y[0] = -np.inf
    y[7::5] = np.nan
    return y


def inf_but_last(x):
    """+inf for every input but the last, which is 0."""
    y = all_inf(x)
    y[-1] = 0
    return y


def erf_odd(x):
    """SciPy's double erf of |x| rounded once, with x's sign: odd bit for bit."""
    return np.copysign(erf_scipy_once(np.abs(x)), x)


# where `erf_odd_but_one` is not odd: the 1001st input of a block of 2^18 from -0.5 on, past
# the outputs the mirror's test reads first
NOT_ODD_AT = 0xBF000000 + 1000


def erf_odd_but_one(x):
    """erf_odd, one ulp towards zero at NOT_ODD_AT alone."""
    y = erf_odd(x)
    hit = x.view(np.uint32) == NOT_ODD_AT
    y[hit] = np.nextafter(y[hit], np.float32(0))
    return y


_BUFFER: dict[str, np.ndarray] = {}


def erf_odd_in_one_buffer(x):
    """erf_odd written into one array that every call returns, rewritten by the next call:
    what a kernel with a preallocated output does."""
    out = _BUFFER.get("out")
    if out is None or len(out) != len(x):
        out = _BUFFER["out"] = np.empty(len(x), dtype=np.float32)
    out[:] = erf_odd(x)
    return out


def erf_is_its_input(x):
    """x itself, the very array: odd, and its outputs the memory the sweep writes the next
    block's inputs to."""
    return x

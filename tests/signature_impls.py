"""Planted implementations for the defect-signature tests: each a correctly rounded base
(float64 formulas rounded once) with one mechanism planted, in whatever dtype it is given."""
import numpy as np
from scipy import special

from gelucheck.formats import get_format, narrow


def _fmt(x):
    return get_format(x.dtype)


def _round(v, x):
    return narrow(v, _fmt(x))


def _gelu64(x):
    x64 = x.astype(np.float64)
    with np.errstate(invalid="ignore"):
        return np.where(np.isneginf(x64), -0.0, x64 * special.ndtr(x64))


def gelu(x):
    """Correctly rounded but for near-ties: no signature."""
    return _round(_gelu64(x), x)


def erf(x):
    return _round(special.erf(x.astype(np.float64)), x)


def phi(x):
    return _round(special.ndtr(x.astype(np.float64)), x)


def gelu_grad(x):
    x64 = x.astype(np.float64)
    with np.errstate(invalid="ignore"):
        v = special.ndtr(x64) + x64 * np.exp(-0.5 * x64 * x64) / np.sqrt(2 * np.pi)
    return _round(np.where(np.isneginf(x64), -0.0, np.where(np.isposinf(x64), 1.0, v)), x)


def flush_to_zero(x):
    y = gelu(x)
    y[np.abs(y.astype(np.float64)) < _fmt(x).smallest_normal] = 0
    return y


def overflow(x):
    y = gelu(x)
    y[x.astype(np.float64) > _fmt(x).max_finite / 4] = np.inf
    return y


def nan_at_infinity(x):
    y = gelu(x)
    y[np.isinf(x.astype(np.float64))] = np.nan
    return y


def nan(x):
    y = gelu(x)
    a = np.abs(x.astype(np.float64))
    y[(a > 100) & (a < 1000)] = np.nan
    return y


def tail_cancellation(x):
    """Φ as 0.5·(1+erf(x/√2)), every step rounded to the format: 1+erf cancels."""
    fmt = _fmt(x)
    e = narrow(special.erf(x.astype(np.float64) / np.sqrt(2)), fmt).astype(np.float64)
    return narrow(0.5 * narrow(1.0 + e, fmt).astype(np.float64), fmt)


def absolute_error(x):
    """erf rounded to multiples of 8 smallest normals of the format: an absolute error."""
    step = 8 * _fmt(x).smallest_normal
    v = special.erf(x.astype(np.float64))
    return _round(np.round(v / step) * step, x)


def low_precision(x):
    """GELU rounded to bfloat16 first: bfloat16's precision inside float16 or float32."""
    return _round(narrow(_gelu64(x), "bfloat16").astype(np.float64), x)


def biased(x):
    """GELU rounded toward zero."""
    v = _gelu64(x)
    y = _round(v, x)
    away = np.isfinite(v) & (np.abs(y.astype(np.float64)) > np.abs(v))
    y[away] = np.nextafter(y[away], np.zeros(1, y.dtype))
    return y


def wrong_form(x):
    """The tanh form, declared as exact GELU."""
    x64 = x.astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        v = 0.5 * x64 * (1 + np.tanh(np.sqrt(2 / np.pi) * (x64 + 0.044715 * x64**3)))
    return _round(np.where(np.isneginf(x64), -0.0, np.where(np.isposinf(x64), np.inf, v)), x)


def out_of_range(x):
    """erf, above 1 at the largest inputs."""
    y = erf(x)
    big = x.astype(np.float64) > 8
    y[big] = np.nextafter(np.ones(1, y.dtype), np.full(1, 2, y.dtype))[0]
    return y


def not_monotone(x):
    """Φ on [0.25, 0.5) and [-0.76, -0.74) (where the float32 samples are dense) 3 ulps high
    at every odd encoding, correct elsewhere: outputs that turn back between neighbours there
    (a wobble, as two paths that disagree by turns)."""
    y = phi(x)
    x64 = x.astype(np.float64)
    odd = (x.view(_fmt(x).uint) & 1) == 1
    seam = (((x64 >= 0.25) & (x64 < 0.5)) | ((x64 >= -0.76) & (x64 < -0.74))) & odd
    for _ in range(3):
        y[seam] = np.nextafter(y[seam], np.full(1, 2, y.dtype))
    return y


def step_down(x):
    """Φ correctly rounded but at x = 2.5, two ulps low (within the binade of Φ(2.5) =
    0.9938), where its neighbours' rounded values are the same value (Φ rises by far less
    than an ulp there): one step down."""
    y = phi(x)
    at = x.astype(np.float64) == 2.5
    for _ in range(2):
        y[at] = np.nextafter(y[at], np.zeros(1, y.dtype))
    return y


def wrong_sign(x):
    """GELU′ of the wrong sign on -2 < x < -1 (where it is negative)."""
    y = gelu_grad(x)
    x64 = x.astype(np.float64)
    y[(x64 > -2) & (x64 < -1)] *= -1
    return y


def false_zero(x):
    """GELU′ returned as 0 on 1 < x < 2."""
    y = gelu_grad(x)
    x64 = x.astype(np.float64)
    y[(x64 > 1) & (x64 < 2)] = 0
    return y

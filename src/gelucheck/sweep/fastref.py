"""A reference fit for all 2^32 float32 inputs: float64 formulas whose error bound is
established against mpmath, with mpmath itself for the few inputs whose float64 value lies
too close to a float32 rounding boundary for that bound (design.md, References).

Per function, x splits into three parts:
- |x| < 2^-30: Taylor, Φ = 1/2 + x·φ(0), GELU = x·Φ, tanh form = x·(1/2 + x·√(2/π)/2); the
  next terms are below 2^-60 relative.
- the middle: float64 SciPy ``ndtr`` (GELU: x·ndtr(x)), and x/(1 + exp(-2u)) for the tanh form.
- saturation (x >= 9, or far enough below zero that float64 underflows): 1, x, or a zero; the
  neglected tail is below 2^-60 relative (Q(9) < 2^-62).
The error of the float64 value is at most RELATIVE_BOUND · max(|v|, 2^-126): measured
against the mpmath reference, the worst is 2^-44.96 (Φ and GELU near x = -12.95, where
erfc's argument rounding dominates) and 2^-45.3 for the tanh form; 2^-40 leaves 32x.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import special

from ..formats import FLOAT32, FLOAT64
from ..reference.mpref import correctly_rounded

RELATIVE_BOUND = 2.0**-40
TINY = 2.0**-30
SATURATION = 9.0
PHI0 = 1 / math.sqrt(2 * math.pi)
HALF_K = math.sqrt(2 / math.pi) / 2
K = math.sqrt(2 / math.pi)
CUBIC = 0.044715


def fast_values(function: str, x: np.ndarray) -> np.ndarray:
    """float64 values of the function at float32 inputs, within RELATIVE_BOUND."""
    x64 = x.astype(np.float64)
    a = np.abs(x64)
    out = np.empty_like(x64)
    tiny = a < TINY
    high = x64 >= SATURATION
    mid = ~(tiny | high)
    xm = x64[mid]
    if function == "phi":
        out[tiny] = 0.5 + x64[tiny] * PHI0
        out[high] = 1.0
        out[mid] = special.ndtr(xm)
    elif function == "gelu":
        xt = x64[tiny]
        out[tiny] = xt * (0.5 + xt * PHI0)
        out[high] = x64[high]
        out[mid] = xm * special.ndtr(xm)
    else:
        xt = x64[tiny]
        out[tiny] = xt * (0.5 + xt * HALF_K)
        out[high] = x64[high]
        with np.errstate(over="ignore"):
            out[mid] = xm / (1.0 + np.exp(-2.0 * K * (xm + CUBIC * xm * xm * xm)))
    # negative underflow: ndtr and exp give +0 where GELU's sign is negative
    if function != "phi":
        out = np.where(out == 0, np.copysign(0.0, x64), out)
    return out


def float32_ulp(v: np.ndarray) -> np.ndarray:
    """ulp(v) in float32 for float64 v, from the exponent bits (design.md's definition)."""
    exponent = ((v.view(np.int64) >> 52) & 0x7FF) - 1023  # floor(log2|v|) for normal v
    exponent = np.maximum(exponent, FLOAT32.emin) - (FLOAT32.precision - 1)
    return ((exponent + 1023) << 52).view(np.float64)


def _uncertain(v: np.ndarray, unit: np.ndarray, side_unknown: np.ndarray) -> np.ndarray:
    """Where the float64 value is too close, for RELATIVE_BOUND, to a float32 rounding
    midpoint (the rounding could go either way) or to a power of two (ulp(v) could halve).
    The bound is relative to max(|v|, 2^-126): below, float32's quantum is fixed."""
    rounded = v.astype(np.float32).astype(np.float64)
    scale = np.maximum(np.abs(v), FLOAT32.smallest_normal)
    near_midpoint = np.abs(v - rounded) > (0.5 * unit - RELATIVE_BOUND * scale)
    mantissa = np.abs(np.frexp(v)[0])
    near_power = side_unknown & (np.abs(v) >= FLOAT32.smallest_normal) & (
        (mantissa - 0.5 < RELATIVE_BOUND) | (1.0 - mantissa < RELATIVE_BOUND))
    return (near_midpoint | near_power) & (v != 0)


def reference(function: str, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """(v, unit, slow): float64 values of the function at float32 inputs, float32's ulp of
    the exact values, and how many needed mpmath because the fast value was uncertain."""
    v = fast_values(function, x)
    unit = float32_ulp(v)
    # Where the side of a power of two is known, no mpmath is needed for it:
    # Φ(x) < 1 for every x > 0, so its binade is [1/2, 1) there; Φ(x) = 1/2 ± |x|φ(0) for
    # tiny x takes the side of the sign of x; saturated GELU is just below x.
    if function == "phi":
        known = x > 0
        unit = np.where(known, 2.0**-24, unit)
        tiny = np.abs(x) < TINY
        unit = np.where(tiny & (x < 0), 2.0**-25, unit)
        known |= tiny
    else:
        known = x >= SATURATION
        power = np.abs(np.frexp(v)[0]) == 0.5
        unit = np.where(known & power, unit / 2, unit)
    slow = np.flatnonzero(_uncertain(v, unit, ~known))
    for i in slow:
        r = correctly_rounded(function, float(x[i]), FLOAT32)
        v[i] = float(FLOAT64.from_bits(r.float64_bits))
        rounded = float(FLOAT32.from_bits(r.bits))
        unit[i] = float32_ulp(np.array([rounded]))[0] * (0.5 if _below_power(rounded, r.residual)
                                                         else 1.0)
    return v, unit, len(slow)


def _below_power(rounded: float, residual: float) -> bool:
    """The exact value lies just inside the binade below the power of two it rounded to."""
    return (abs(math.frexp(rounded)[0]) == 0.5 and abs(rounded) > FLOAT32.smallest_normal
            and math.copysign(1.0, residual) * math.copysign(1.0, rounded) < 0)

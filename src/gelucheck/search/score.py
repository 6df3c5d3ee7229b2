"""Float64 errors in ulps against the search's scaled reference: |y - v| / ulp(v) with
ulp(v) = 2^(max(e, -1022) - 52), e = floor(log2 |v|) (the metric of ulp.py), computed in the
reference's scale so that values below the normal range, or far below any double, keep their
precision; and how far each figure may be off (the reference's bound, in the same ulps)."""
from __future__ import annotations

import numpy as np

from .reference import Reference, Values, compiled_kernels, kernel_arguments

QUANTUM_EXPONENT = -1074  # float64's subnormal quantum
MIN_NORMAL_EXPONENT = -1022
PRECISION = 53


def unit_exponents(v: Values) -> np.ndarray:
    """The exponent of ulp(v) for each value (a zero value: the subnormal quantum's)."""
    mantissa, exponent = np.frexp(v.hi)  # hi = mantissa·2^exponent, |mantissa| in [1/2, 1)
    floor_log2 = exponent.astype(np.int64) - 1 + v.scale
    # hi rounded up to a power of two from just below it: v lies in the binade under it (a
    # signed zero lo says the side of a difference too small to see)
    below = (np.abs(mantissa) == 0.5) & (np.signbit(v.lo) != np.signbit(v.hi))
    floor_log2 = floor_log2 - below
    unit = np.maximum(floor_log2, MIN_NORMAL_EXPONENT) - (PRECISION - 1)
    return np.where(v.hi == 0, QUANTUM_EXPONENT, unit)


def ulps(y: np.ndarray, v: Values) -> tuple[np.ndarray, np.ndarray]:
    """(error, doubt): |y - v| / ulp(v), infinite for a NaN or infinite y, and the most
    the reference's own error can move that figure."""
    y = np.asarray(y, dtype=np.float64)
    unit = unit_exponents(v)
    # v/ulp is below 2^53: its scaling is exact or underflows harmlessly far below one ulp;
    # y/ulp may overflow to inf only where the error is beyond any finite count of ulps
    shift = np.clip(v.scale - unit, -4000, 4000).astype(np.int32)
    with np.errstate(over="ignore", invalid="ignore"):
        ys = np.ldexp(y, np.clip(-unit, -4000, 4000).astype(np.int32))
        error = np.abs((ys - np.ldexp(v.hi, shift)) - np.ldexp(v.lo, shift))
    error = np.where(np.isfinite(y), error, np.inf)
    return np.where(np.isnan(error), np.inf, error), np.ldexp(v.bound, shift)


def fused_ulps(reference: Reference, x: np.ndarray, y: np.ndarray, error: np.ndarray) -> bool:
    """ulps(y, reference.values(x))'s errors written into error, the same bits, in one
    compiled loop per segment, so that no value leaves the core's registers: True where
    numba is installed and the inputs are a whole cell's kind (Reference.segments), else
    False (some may be written), for the caller to score them the general way."""
    compiled = compiled_kernels()
    segments = reference.segments(x) if compiled is not None else None
    return segments is not None and all(
        compiled.score(x, y, where.start, where.stop, *kernel_arguments(segment),
                       segment.scale, segment.bound, error)
        for segment, where in segments)

"""The search's expansion evaluation compiled by numba (the ``fast`` extra): the same
operations in the same order as reference._evaluate's NumPy, and score.ulps' after it (no
contraction into fused multiply-adds: numba's default), so both give the same bits - tests
hold them to it."""
from __future__ import annotations

import numpy as np
from numba import njit

CHUNK = 256  # inputs whose Horner sums are carried together: they stay in the L1 cache
FRACTION_MASK = (1 << 52) - 1


@njit(cache=True, error_model="numpy", inline="always")
def _horner(x, start, n, centre, f1, f2, tail, t, p):  # pragma: no cover - compiled
    # Horner's steps as loops over the inputs, one coefficient at a time: each loop runs
    # in SIMD lanes, where a loop over the coefficients per input is one long dependent chain
    last = tail[tail.shape[0] - 1]
    for j in range(n):
        t[j] = ((x[start + j] - centre) * f1) * f2
        p[j] = last
    for k in range(tail.shape[0] - 2, -1, -1):
        c = tail[k]
        for j in range(n):
            p[j] = p[j] * t[j] + c


@njit(cache=True, error_model="numpy", inline="always")
def _value(tj, pj, c0, c0_low, c1_low, a1, a2):  # pragma: no cover - compiled
    """(hi, lo) from t and the tail's Horner sum: reference._evaluate's double-double steps."""
    rest = (tj * tj) * pj
    split = tj * 134217729.0
    t1 = split - (split - tj)
    t2 = tj - t1
    product = (a1 + a2) * tj
    product_error = ((a1 * t1 - product) + a1 * t2 + a2 * t1) + a2 * t2
    head = c0 + product
    bb = head - c0
    head_error = (c0 - (head - bb)) + (product - bb)
    low = ((c0_low + c1_low * tj) + (product_error + head_error)) + rest
    value = head + low
    return value, low - (value - head)


@njit(cache=True, error_model="numpy")
def evaluate(x, start, stop, centre, f1, f2, tail, c0, c0_low, c1_low, a1, a2,
             hi, lo):  # pragma: no cover - compiled; tests compare it with NumPy's
    n = stop - start
    t = np.empty(n)
    p = np.empty(n)
    _horner(x, start, n, centre, f1, f2, tail, t, p)
    for j in range(n):
        hi[start + j], lo[start + j] = _value(t[j], p[j], c0, c0_low, c1_low, a1, a2)


@njit(cache=True, error_model="numpy", inline="always")
def _power(k):  # pragma: no cover - compiled
    """2^k for a normal exponent k, built from its encoding (exact, as ldexp's scaling)."""
    return np.int64((k + 1023) << 52).view(np.float64)


@njit(cache=True, error_model="numpy")
def score(x, y, start, stop, centre, f1, f2, tail, c0, c0_low, c1_low, a1, a2, scale,
          bound, error):  # pragma: no cover - compiled; tests compare it with NumPy's
    """The errors of y[start:stop] in ulps against the expansion, as score.ulps computes them
    from reference.values' (hi, lo): True, or False where an input needs what this loop
    leaves out - a value outside the normal range, one whose side of a power of two the
    function's row decides (reference._sided), a scaling outside a double's exponents - and
    the caller scores the inputs the general way. Without a branch in the loop over the
    inputs (those cases are gathered into one flag), so that it runs in SIMD lanes; and
    without the doubts, which only the kept candidates need (a second stream of stores, at
    the same offset in its page as the first, stalls the loads: twice the time)."""
    t = np.empty(CHUNK)
    p = np.empty(CHUNK)
    for first in range(start, stop, CHUNK):
        n = min(CHUNK, stop - first)
        _horner(x, first, n, centre, f1, f2, tail, t, p)
        outside = False
        for j in range(n):
            hi, lo = _value(t[j], p[j], c0, c0_low, c1_low, a1, a2)
            bits = np.float64(hi).view(np.int64)
            biased = (bits >> 52) & 0x7FF
            power = (bits & FRACTION_MASK) == 0
            # v lies in the binade under a hi rounded up to 2^e
            below = power & ((np.float64(lo).view(np.int64) < 0) != (bits < 0))
            unit = max(biased - 1023 + scale - np.int64(below), -1022) - 52
            shift = scale - unit
            outside |= ((biased == 0) | (biased == 0x7FF) | (power & (abs(lo) <= bound))
                        | (shift < -1022) | (shift > 1023) | (unit < -1023) | (unit > 1022))
            into = _power(min(max(shift, -1022), 1023))
            yi = y[first + j]
            e = abs((yi * _power(min(max(-unit, -1022), 1023)) - hi * into) - lo * into)
            error[first + j] = e if np.isfinite(yi) and not np.isnan(e) else np.inf
        if outside:
            return False
    return True

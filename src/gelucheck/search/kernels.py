"""The search's expansion evaluation compiled by numba (the ``fast`` extra): the same
operations in the same order as reference._evaluate's NumPy (no contraction into fused
multiply-adds: numba's default), so both give the same bits - a test holds them to it."""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, error_model="numpy")
def evaluate(x, start, stop, centre, f1, f2, tail, c0, c0_low, c1_low, a1, a2,
             hi, lo):  # pragma: no cover - compiled; tests compare it with NumPy's
    # Horner's steps as loops over the inputs, one coefficient at a time: each loop runs
    # in SIMD lanes, where a loop over the coefficients per input is one long dependent chain
    n = stop - start
    t = np.empty(n)
    p = np.empty(n)
    last = tail[tail.shape[0] - 1]
    for j in range(n):
        t[j] = ((x[start + j] - centre) * f1) * f2
        p[j] = last
    for k in range(tail.shape[0] - 2, -1, -1):
        c = tail[k]
        for j in range(n):
            p[j] = p[j] * t[j] + c
    for j in range(n):
        tj = t[j]
        rest = (tj * tj) * p[j]
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
        hi[start + j] = value
        lo[start + j] = low - (value - head)


def ready() -> np.ndarray:
    """Compile (or load from numba's cache) before anything is timed."""
    x = np.ones(1)
    out = np.zeros(1), np.zeros(1)
    evaluate(x, 0, 1, 1.0, 1.0, 1.0, np.ones(2), 1.0, 0.0, 0.0, 1.0, 0.0, *out)
    return out[0]

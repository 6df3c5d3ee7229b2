"""Ulp error against x, reduced to what a plot needs and a JSON report can carry: the inputs
split into bins uniform in asinh(x / 0.01) - linear near 0, logarithmic in both tails, so
that the tails and the top of the range are visible - and per bin the largest error and the
input where it occurs. Exact zeros are left out (a log axis has no place for them; the
tables say how many inputs are correctly rounded)."""
from __future__ import annotations

import numpy as np

BINS = 400
SCALE = 0.01


def transform(x):
    """asinh(x / SCALE), also where x / SCALE overflows (asinh(y) = ln 2y for huge y)."""
    x = np.asarray(x, dtype=np.float64)
    big = np.abs(x) > 1e300
    t = np.arcsinh(np.where(big, 0.0, x) / SCALE)
    with np.errstate(all="ignore"):  # the branch not taken: log(0) at x = 0
        return np.where(big, np.sign(x) * (np.log(np.abs(x)) + np.log(2 / SCALE)), t)


def profile(x: np.ndarray, errors: np.ndarray) -> dict:
    """{"x": [...], "max_ulp": [...]}: per non-empty bin, its worst input and error (inf for
    an infinite or NaN error)."""
    t = transform(x)
    edges = np.linspace(t.min(), t.max(), BINS + 1)
    which = np.clip(np.searchsorted(edges, t, "right") - 1, 0, BINS - 1)
    err = np.where(np.isnan(errors), np.inf, errors)
    order = np.lexsort((err, which))  # by bin, then error: the last of each bin is its max
    last = np.flatnonzero(np.diff(np.append(which[order], BINS)) != 0)
    pick = order[last]
    keep = err[pick] > 0
    return {"x": x[pick][keep].astype(np.float64).tolist(),
            "max_ulp": err[pick][keep].tolist()}

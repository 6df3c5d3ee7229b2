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


def profile(x: np.ndarray, errors: np.ndarray, binning: Binning | None = None) -> dict:
    """{"x": [...], "max_ulp": [...]}: per non-empty bin, its worst input and error (inf for
    an infinite or NaN error; of equal errors, the last input's). ``binning``: the inputs'
    (``bins(x)``), where it is kept."""
    order, starts, segment = binning if binning is not None else bins(x)
    err = np.where(np.isnan(errors), np.inf, errors)[order]  # by bin, each in input order
    worst = np.repeat(np.maximum.reduceat(err, starts), np.diff(np.append(starts, err.size)))
    hit = np.flatnonzero(err == worst)
    last = hit[np.append(segment[hit][1:] != segment[hit][:-1], True)]
    pick = order[last]
    keep = err[last] > 0
    return {"x": x[pick][keep].astype(np.float64).tolist(),
            "max_ulp": err[last][keep].tolist()}


def of_case(case) -> dict:
    """The profile of a measurement (checks.case): the bins depend on the stored inputs alone,
    shared by every implementation of the function in the dtype, so they are kept with the
    reference table."""
    return profile(case.x, case.errors, case.table.derived("profile bins", lambda: bins(case.x)))


Binning = tuple[np.ndarray, np.ndarray, np.ndarray]


def bins(x: np.ndarray) -> Binning:
    """(the inputs' indices sorted by bin, stably; where each bin starts in that order; each
    sorted position's bin number among the non-empty bins)."""
    t = transform(x)
    edges = np.linspace(t.min(), t.max(), BINS + 1)
    which = np.clip(np.searchsorted(edges, t, "right") - 1, 0, BINS - 1)
    order = np.argsort(which, kind="stable")
    new_bin = np.append(True, np.diff(which[order]) != 0)
    return order, np.flatnonzero(new_bin), np.cumsum(new_bin) - 1

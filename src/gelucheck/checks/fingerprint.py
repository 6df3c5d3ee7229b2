"""Which formula an implementation computes, read off its outputs (docs/design.md, Formula
fingerprints): converters and kernels have swapped GELU's forms while a loose tolerance hid it,
so the declared function is checked against what the numbers say.

Candidates: exact GELU, the tanh form, x·σ(1.702x) and x·σ(1.773x), compared over the stored
inputs with 1/16 <= |x| <= 5 - the body of the function, where the forms differ most (exact and
tanh by up to 4.7e-4, the sigmoid forms by up to 0.02) and no output is near underflow.
"""
from __future__ import annotations

import numpy as np

from ..backends import Implementation
from ..formats import Format, narrow
from ..functions import GELU, GELU_TANH, X_TIMES_CDF
from ..results import Fingerprint
from ..ulp import Exact, ulp_error
from .case import Case

WINDOW = (1 / 16, 5.0)  # |x|: below 1/16 every form is x/2 + O(x²) and they agree often
# The winner must be preferred on at least 70% of the inputs that tell it from any rival; a
# random output would be preferred on about half.
MARGIN = 0.4
NONE = "none of these"
UNDECIDED = "undecided"
# With no clear winner: outputs within this many ulps of some candidate (median) are one of
# them computed too roughly to tell which ("undecided"); farther, they are none of them.
NOISE_ULP = 4.0


def sigmoid_form(tab, fmt: Format, k: float) -> np.ndarray:
    """x·σ(kx) in float64, rounded once into the format. Not always correctly rounded, but
    within ~1e-16 relative: the forms differ by far more than that, which is all a vote needs."""
    x = tab.x.astype(np.float64)
    with np.errstate(over="ignore"):
        return narrow(x / (1.0 + np.exp(-k * x)), fmt)


CANDIDATES = {
    "exact": ("x·Φ(x), erf/erfc", lambda tab, fmt: tab.rounded(GELU)),
    "tanh": ("0.5x(1+tanh(√(2/π)(x+0.044715x³)))", lambda tab, fmt: tab.rounded(GELU_TANH)),
    "sigmoid_1.702": ("x·σ(1.702x)", lambda tab, fmt: sigmoid_form(tab, fmt, 1.702)),
    "sigmoid_1.773": ("x·σ(1.773x)", lambda tab, fmt: sigmoid_form(tab, fmt, 1.773)),
}


def _candidates(tab, fmt: Format) -> tuple[np.ndarray, np.ndarray]:
    """Every candidate's values at the table's inputs (float64, one row each) and the inputs
    the vote reads: |x| in WINDOW, every candidate finite. The same for every implementation
    measured at those inputs: kept with the table."""
    refs = np.stack([CANDIDATES[c][1](tab, fmt).astype(np.float64) for c in CANDIDATES])
    size = np.abs(tab.x.astype(np.float64))
    return refs, (size >= WINDOW[0]) & (size <= WINDOW[1]) & np.all(np.isfinite(refs), axis=0)


def declared(impl: Implementation) -> str | None:
    """The candidate an implementation says it computes: its ``formula``, else its function's
    (exact GELU or the tanh form); None for what is not a GELU form."""
    if impl.formula is not None:
        return impl.formula
    return {GELU: "exact", GELU_TANH: "tanh"}.get(impl.function)


def applies(impl: Implementation) -> bool:
    return impl.reference_function.family == X_TIMES_CDF


def check(case: Case) -> Fingerprint | None:
    """The fingerprint of the case's outputs (None for functions that are not GELU forms);
    raises the implementation's ImplementationError where it has not run yet and fails."""
    if not applies(case.impl):
        return None
    return identify(case.table, case.fmt, case.outputs, declared(case.impl))


def identify(tab, fmt: Format, y: np.ndarray, expected: str | None) -> Fingerprint:
    """Candidates meet in pairs, each on the inputs where their values differ: the share of
    those inputs whose output is closer to one than to the other (ties count half). The
    winner is the candidate preferred to every other; its margin, the smallest lead
    (2·share − 1) over any of them; it is identified when that margin is at least MARGIN and
    the outputs lie, at the median, within a quarter of the distance that separates it from
    its closest rival (else an implementation of a fifth formula would be named after the
    nearest of ours)."""
    names = list(CANDIDATES)
    refs, window = tab.derived(f"fingerprint candidates {fmt.name}",
                               lambda: _candidates(tab, fmt))
    out = y.astype(np.float64)
    keep = window & np.isfinite(out)
    refs, out = refs[:, keep], out[keep]
    if not keep.any():  # no finite output in the window (an all-NaN kernel): nothing to go on
        return Fingerprint(NONE, expected, 0, 0.0, {})
    distance = np.abs(refs - out)
    k = len(names)
    share = np.full((k, k), 0.5)  # share[a, b]: how often the output prefers a to b
    for a in range(k):
        for b in range(a + 1, k):
            differ = refs[a] != refs[b]
            if differ.any():
                da, db = distance[a][differ], distance[b][differ]
                share[a, b] = float(np.mean((da < db) + 0.5 * (da == db)))
                share[b, a] = 1.0 - share[a, b]
    lead = 2 * share - 1
    np.fill_diagonal(lead, np.inf)
    best = int(np.argmax(lead.min(axis=1)))
    rival = int(np.argmin(lead[best]))
    margin = float(lead[best, rival])
    differ = refs[best] != refs[rival]
    ulps = [ulp_error(out.astype(fmt.dtype), Exact(r, np.zeros_like(r)), fmt) for r in refs]
    nearest = float(np.median(np.min(ulps, axis=0)))
    if margin < MARGIN or not differ.any():
        identified = NONE if nearest > NOISE_ULP else UNDECIDED
    elif (np.median(ulps[best]) <= NOISE_ULP
          or np.median(distance[best]) <= np.median(np.abs(refs[best] - refs[rival])) / 4):
        identified = names[best]
    else:
        identified = NONE
    per = {}
    for c, name in enumerate(names):
        per[name] = {"equal_share": float(np.mean(distance[c] == 0)),
                     "median_ulp": float(np.median(ulps[c])),
                     "preferred_over_winner": None if c == best else float(share[c, best])}
    return Fingerprint(identified, expected, int(keep.sum()), margin, per)

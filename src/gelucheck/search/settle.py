"""The search's figures settled by the reference of record: each candidate's error computed
again from mpmath's correctly rounded value (Ziv's loop, reference/mpref.py), so that what
``gelucheck search`` prints does not rest on the fast reference. A candidate whose two
figures differ by more than the fast reference's proven bound is a defect of gelucheck, and
stops the search with the input named."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..checks.reference_data import exact_of
from ..formats import FLOAT64
from ..functions import Function
from ..reference.mpref import correctly_rounded
from ..ulp import ulp_error
from .task import Candidate

# rounding of the error figure itself, beyond the reference's bound (ulps)
SLACK = 2.0**-40


@dataclass(frozen=True)
class Settled:
    candidate: Candidate
    error: float  # mpmath's figure
    exact: float  # the correctly rounded value


def settle(function: Function, candidates: list[Candidate]) -> list[Settled]:
    """Every candidate's figure from mpmath, largest first (ties: the smaller input)."""
    settled = []
    for c in candidates:
        exact = exact_of(correctly_rounded(function, c.x, FLOAT64), FLOAT64)
        value = float(exact.rounded[0])
        error = float(ulp_error(np.array([c.y]), exact, FLOAT64)[0])
        if abs(error - c.error) > c.doubt + SLACK and np.isfinite(error):
            raise ArithmeticError(
                f"the search's reference put {function.name}({c.x.hex()}) {c.error} ulps off "
                f"where mpmath says {error} (its bound: {c.doubt}): a defect of gelucheck")
        settled.append(Settled(c, error, value))
    return sorted(settled, key=lambda s: (-s.error, s.candidate.x))

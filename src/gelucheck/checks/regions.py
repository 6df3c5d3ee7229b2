"""Regions of x in which errors are reported separately (docs/design.md, Checks), and the
figures of one region, built the same way by the checks and by the sweep."""
from __future__ import annotations

import math

import numpy as np

from ..formats import Format
from ..results import Region

REGIONS: list[tuple[str, float, float]] = [
    ("x<-5", -math.inf, -5.0),  # the negative tail: tiny results, where precision is lost
    ("-5<=x<-1", -5.0, -1.0),
    ("-1<=x<0", -1.0, 0.0),  # the dip, the minimum at x* = -0.7518
    ("0<=x<1", 0.0, 1.0),
    ("1<=x<5", 1.0, 5.0),
    ("x>=5", 5.0, math.inf),
]
REGION_NAMES = [name for name, _, _ in REGIONS]


def mask(x: np.ndarray, lo: float, hi: float) -> np.ndarray:
    x = x.astype(np.float64)
    return (x >= lo) & (x < hi)


def region(name: str, lo: float, hi: float, n: int, max_ulp: float, mean_ulp: float,
           worst_input, fmt: Format, not_correctly_rounded: int) -> Region:
    return Region(name, lo, hi, int(n), float(max_ulp), float(mean_ulp), float(worst_input),
                  fmt.hex(worst_input), int(not_correctly_rounded))


def region_of(x: float) -> str:
    """The name of the region x lies in (x = +inf in the last; NaN in none: "all")."""
    for name, lo, hi in REGIONS:
        if lo <= x < hi or (hi == math.inf and x == math.inf):
            return name
    return "all"

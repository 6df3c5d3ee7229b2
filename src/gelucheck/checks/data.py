"""The inputs and exact values a check measures against, loaded once per format."""
from __future__ import annotations

from functools import cache

import numpy as np

from ..formats import get_format
from ..reference import store
from ..ulp import Exact


@cache
def table(dtype: str) -> store.Table:
    return store.load(dtype)


def exact(tab: store.Table, function: str):
    """What ulp_error takes as the exact value: float64, or (rounded, residual) for float64."""
    if tab.fmt.bits == 64:
        return Exact(tab.exact(function), tab.residual(function))
    return tab.exact(function)


def inputs(dtype: str) -> np.ndarray:
    return table(get_format(dtype).name).x

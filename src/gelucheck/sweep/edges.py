"""The closed forms at both ends of x (docs/design.md, The sweep): the far left (a signed
zero, erf's -1, erfc's 2), the right (1, 0 or x itself, erf's 1, erfc's 0), by the
function's family; where each begins is the function's SweepSpec (its reference module's)."""
from __future__ import annotations

import math

import numpy as np

from ..functions import CDF, COMPLEMENT, DERIVATIVE, ODD, PDF, Function
from .constants import ONE_DOWN, ONE_UP, TAIL_FLOOR
from .reference import spec

TINY = 2.0**-30


def far_left(function: Function) -> float:
    """Where the far left ends (x at or below it)."""
    return spec(function).far_left


def right_edge(function: Function) -> float:
    """Where the right part begins (x above it): saturation (Φ 1, GELU x), GELU′'s flat 1,
    φ's zero, erf's 1, erfc's 0."""
    return spec(function).right_edge


# erf's and erfc's closed forms at both ends: (far left, right), the values every float32
# result rounds to there (sweep/erf_reference.py computes their float64)
_OUTER = {ODD: (-1.0, 1.0), COMPLEMENT: (2.0, 0.0)}


def far_value(function: Function) -> float:
    """The value of the far left (x <= FAR_LEFT): a signed zero, erf's -1, erfc's 2."""
    if function.family in _OUTER:
        return _OUTER[function.family][0]
    return -0.0 if function.zero_is_negative(-1.0) else 0.0


def far_reference(function: Function) -> float:
    """The far left's float64 reference: TAIL_FLOOR with the function's sign (ONE_DOWN's
    comment)."""
    return math.copysign(TAIL_FLOOR, far_value(function))


def right_value(function: Function, x: np.ndarray) -> np.ndarray | float:
    """The value right of _right: 1 (Φ, GELU′ of both forms), 0 (φ), or x itself (GELU of
    both forms), 1 (erf), 0 (erfc)."""
    if function.family in _OUTER:
        return _OUTER[function.family][1]
    if function.family == PDF:
        return 0.0
    return 1.0 if function.family in (CDF, DERIVATIVE) else x


def right_reference(function: Function, x: np.ndarray) -> np.ndarray | float:
    """The float64 reference right of _right, on the exact value's side of _right_value
    (ONE_DOWN's comment): above 0 (φ), below 1 (Φ), above 1 (GELU′, both forms), below x
    (GELU, both forms)."""
    if function.family == PDF:
        return TAIL_FLOOR
    if function.family == CDF:
        return ONE_DOWN
    return ONE_UP if function.family == DERIVATIVE else np.nextafter(x, 0.0)

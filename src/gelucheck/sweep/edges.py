"""Where the sweep's fast reference splits x, and the closed forms at both ends
(docs/design.md, The sweep): the far left (a signed zero), the right (1, 0 or x itself), the
edges between."""
from __future__ import annotations

import math

import numpy as np

from ..functions import (
    CDF,
    COMPLEMENT,
    DERIVATIVE,
    ERF,
    ERFC,
    GELU,
    GELU_GRAD,
    GELU_TANH,
    GELU_TANH_GRAD,
    ODD,
    PDF,
    PHI,
    PHI_GRAD,
    Function,
)
from .constants import ERF_FAR, ERFC_RIGHT, ONE_DOWN, ONE_UP, PHI0, TAIL_FLOOR, K

TINY = 2.0**-30


SATURATION = 9.0


FAR_LEFT = {PHI: -20.0, GELU: -20.0, GELU_TANH: -12.0, PHI_GRAD: -20.0, GELU_GRAD: -20.0,
            GELU_TANH_GRAD: -12.0, ERF: -ERF_FAR, ERFC: -ERF_FAR}


TAYLOR = {PHI: PHI0, GELU: PHI0, GELU_TANH: K / 2}


# GELU′ and the tanh form′ are 1 + (below 2^-55) from here on; φ's right part (0) starts at
# -FAR_LEFT
FLAT_RIGHT = 9.0


def right_edge(function: Function) -> float:
    """Where the right part begins (x above it): saturation (Φ 1, GELU x), GELU′'s flat 1,
    φ's zero, erf's 1, erfc's 0."""
    if function.family in _OUTER:
        return _OUTER[function.family][2]
    if function.family in (DERIVATIVE, PDF):
        return FLAT_RIGHT if function.family == DERIVATIVE else -FAR_LEFT[function]
    return SATURATION


# erf's and erfc's closed forms at both ends: (far left, right, where the right begins), the
# values every float32 result rounds to there (sweep/erf_reference.py computes their float64)
_OUTER = {ODD: (-1.0, 1.0, ERF_FAR), COMPLEMENT: (2.0, 0.0, ERFC_RIGHT)}


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

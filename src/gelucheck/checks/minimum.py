"""GELU's negative minimum as a backend computes it (docs/design.md, Checks).

Over the representable x around x*, the inputs where the output is smallest form a plateau;
the correctly rounded x* should lie on it, and the smallest output should be GELU(x*)
correctly rounded. The plateau is about sqrt(2^(p-2)/GELU''(x*)) values wide each side
(GELU''(x*) = φ(x*)(2 - x*²) ≈ 0.43): 34 in float16, 3,100 in float32, 7·10^7 in float64,
which is therefore scanned with a stride.
"""
from __future__ import annotations

import math
from functools import cache

import numpy as np

from ..backends import Implementation, ImplementationError
from ..formats import Format
from ..functions import Function
from ..reference.mpref import minimum, round_value
from ..results import Failure, MinimumFinding
from ..ulp import ulp_error
from . import reference_data

MAX_POINTS_PER_SIDE = 1 << 15


@cache
def true_minimum(function: Function) -> tuple:
    """(x*, f(x*)) as mpf, from the reference's own solution of f'(x) = 0."""
    return minimum(function, 40)


def window(fmt: Format, centre, curvature: float) -> tuple[np.ndarray, int]:
    """Values around ``centre``: eight plateau widths each side (of a minimum of the given
    f''(x*), the row's ``curvature``), strided past 2^15 values."""
    half_width = 8 * math.sqrt(2.0 ** (fmt.precision - 2) / curvature)
    stride = max(1, math.ceil(half_width / MAX_POINTS_PER_SIDE))
    count = max(64, math.ceil(half_width / stride))
    return fmt.step(centre, np.arange(-count, count + 1) * stride), stride


def check(impl: Implementation, fmt: Format) -> MinimumFinding | Failure | None:
    """The plateau of smallest outputs around x*; None for a function with no minimum."""
    function = impl.function
    if not function.has_minimum:
        return None
    assert function.curvature is not None, function  # a row with a minimum sizes its window
    x_star, v_star = true_minimum(function)
    # x* rounded straight from mpmath: through a float64 it could round twice
    rounded_x = fmt.from_bits(round_value(x_star, fmt).bits)
    xs, stride = window(fmt, rounded_x, function.curvature)
    try:
        y = impl(xs).astype(np.float64)
    except ImplementationError as exc:
        return Failure(str(exc))
    if np.all(np.isnan(y)):
        return Failure(f"{impl.id} gives NaN at every input around x*")
    smallest = np.nanmin(y)
    on = np.flatnonzero(y == smallest)
    centre = len(xs) // 2  # window() puts the rounded x* in the middle
    exact = reference_data.exact_of(round_value(v_star, fmt), fmt)
    return MinimumFinding(
        x_star=float(x_star), x_star_rounded=float(rounded_x),
        plateau_lo=float(xs[on[0]]), plateau_hi=float(xs[on[-1]]),
        plateau_size=int(on.size), contiguous=bool(on[-1] - on[0] + 1 == on.size),
        stride=stride, window=[float(xs[0]), float(xs[-1])],
        value=float(smallest), exact_value=float(v_star),
        true_argmin_on_plateau=bool(y[centre] == smallest),
        value_ulp_error=float(ulp_error([smallest], exact, fmt)[0]),
    )

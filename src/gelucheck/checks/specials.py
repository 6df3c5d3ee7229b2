"""Special inputs against the limits: ±0, ±inf, NaN, ±largest finite, ±smallest subnormal."""
from __future__ import annotations

import math

import numpy as np

from ..backends import Implementation, ImplementationError
from ..formats import FLOAT64, Format
from ..functions import Function
from ..reference.mpref import correctly_rounded
from ..results import Failure, SpecialOutcome
from ..ulp import ulp_error
from . import reference_data

# A finite special passes within one ulp (faithful rounding); limits must be met exactly.
FINITE_TOLERANCE_ULP = 1.0


def special_inputs(fmt: Format) -> dict[str, float]:
    return {"+0": 0.0, "-0": -0.0, "+inf": math.inf, "-inf": -math.inf, "nan": math.nan,
            "+max": fmt.max_finite, "-max": -fmt.max_finite,
            "+min_subnormal": fmt.smallest_subnormal, "-min_subnormal": -fmt.smallest_subnormal}


def _expected(function: Function, label: str, x: float, fmt: Format):
    """The limit, or (exact as float64, what ulp_error takes) for a finite input."""
    if label in function.limits:
        return function.limits[label], None
    r = correctly_rounded(function, x, fmt)
    return float(FLOAT64.from_bits(r.float64_bits)), reference_data.exact_of(r, fmt)


def check(impl: Implementation, fmt: Format) -> dict[str, SpecialOutcome] | Failure:
    """{label: outcome}; ok compares zeros by value, not sign."""
    function = impl.reference_function
    specials = special_inputs(fmt)
    x = np.array(list(specials.values()), dtype=fmt.dtype)
    try:
        y = impl(x).astype(np.float64)
    except ImplementationError as exc:
        return Failure(str(exc))
    out = {}
    for (label, value), computed in zip(specials.items(), y):
        expected, exact = _expected(function, label, value, fmt)
        if exact is None:
            ok = (math.isnan(expected) and math.isnan(computed)) or computed == expected
        else:
            ok = ulp_error([computed], exact, fmt)[0] <= FINITE_TOLERANCE_ULP
        out[label] = SpecialOutcome(value, expected, float(computed), bool(ok))
    return out

"""Special inputs against the limits: ±0, ±inf, NaN, ±largest finite, ±smallest subnormal."""
from __future__ import annotations

import math

import numpy as np

from ..backends import Implementation, ImplementationError
from ..formats import FLOAT64, get_format
from ..reference.mpref import correctly_rounded
from ..ulp import ulp_error
from . import data

# Limits of each function at the non-finite inputs (design.md, Inputs).
LIMITS = {
    "phi": {"+inf": 1.0, "-inf": 0.0, "nan": math.nan},
    "gelu": {"+inf": math.inf, "-inf": -0.0, "nan": math.nan},
    "gelu_tanh": {"+inf": math.inf, "-inf": -0.0, "nan": math.nan},
}
# A finite special passes within one ulp (faithful rounding); limits must be met exactly.
FINITE_TOLERANCE_ULP = 1.0


def special_inputs(dtype: str) -> dict[str, float]:
    fmt = get_format(dtype)
    return {"+0": 0.0, "-0": -0.0, "+inf": math.inf, "-inf": -math.inf, "nan": math.nan,
            "+max": fmt.max_finite, "-max": -fmt.max_finite,
            "+min_subnormal": fmt.smallest_subnormal, "-min_subnormal": -fmt.smallest_subnormal}


def _expected(function: str, label: str, x: float, fmt):
    """The limit, or (exact as float64, what ulp_error takes) for a finite input."""
    if label in LIMITS[function]:
        return LIMITS[function][label], None
    r = correctly_rounded(function, x, fmt)
    return float(FLOAT64.from_bits(r.float64_bits)), data.exact_of(r, fmt)


def check(impl: Implementation, dtype: str) -> dict[str, dict]:
    """{label: {input, expected, computed, ok}}; ok compares zeros by value, not sign."""
    fmt = get_format(dtype)
    function = impl.approximates or impl.function
    specials = special_inputs(fmt.name)
    x = np.array(list(specials.values()), dtype=fmt.dtype)
    try:
        y = impl(x).astype(np.float64)
    except ImplementationError as exc:
        return {"error": {"input": None, "expected": None, "computed": str(exc), "ok": False}}
    out = {}
    for (label, value), computed in zip(specials.items(), y):
        expected, exact = _expected(function, label, value, fmt)
        if exact is None:
            ok = (math.isnan(expected) and math.isnan(computed)) or computed == expected
        else:
            ok = ulp_error([computed], exact, fmt)[0] <= FINITE_TOLERANCE_ULP
        out[label] = {"input": value, "expected": expected, "computed": float(computed),
                      "ok": bool(ok)}
    return out

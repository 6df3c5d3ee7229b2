"""Ulp and absolute error of one implementation in one dtype, overall and per region."""
from __future__ import annotations

import numpy as np

from ..backends import Implementation, ImplementationError
from ..formats import get_format
from ..ulp import abs_error, ulp_error
from . import data
from .regions import REGIONS, mask


def worst_index(errors: np.ndarray) -> int:
    """Index of the largest error (an infinite one first)."""
    return int(np.argmax(np.where(np.isnan(errors), -1.0, errors)))


def _mean(errors: np.ndarray) -> float:
    finite = errors[np.isfinite(errors)]
    return float(finite.mean()) if finite.size else float("inf")


def measure(impl: Implementation, dtype: str, function: str | None = None) -> dict:
    """The accuracy record of ``impl`` in ``dtype`` against the reference of ``function``
    (its own function by default; exact GELU for a stand-in such as quick_gelu)."""
    fmt = get_format(dtype)
    function = function or impl.approximates or impl.function
    result = {
        "kind": "accuracy", "backend": impl.backend, "implementation": impl.name,
        "function": impl.function, "reference": function, "dtype": fmt.name,
        "device": impl.device, "how": impl.how(fmt.name), "description": impl.description,
        "error": None,
    }
    tab = data.table(fmt.name)
    x = tab.x
    try:
        y = impl(x)
    except ImplementationError as exc:
        result.update(n_inputs=len(x), error=str(exc), max_ulp=float("inf"))
        return result
    exact = data.exact(tab, function)
    errors = ulp_error(y, exact, fmt)
    absolute = abs_error(y, exact)
    i = worst_index(errors)
    j = worst_index(absolute)
    result.update({
        "n_inputs": len(x),
        "max_ulp": float(errors[i]),
        "mean_ulp": _mean(errors),
        "n_infinite": int(np.count_nonzero(~np.isfinite(errors))),
        "all_nan": bool(np.all(np.isnan(y.astype(np.float64)))),
        "not_correctly_rounded": int(np.count_nonzero(errors > 0.5)),
        "worst_input": float(x[i]), "worst_input_hex": fmt.hex(x[i]),
        "computed": float(y[i]), "exact": float(tab.exact(function)[i]),
        "max_abs_error": float(absolute[j]), "max_abs_at": float(x[j]),
        "regions": [],
    })
    for name, lo, hi in REGIONS:
        m = mask(x, lo, hi)
        if not m.any():
            continue
        e = errors[m]
        k = worst_index(e)
        result["regions"].append({
            "name": name, "lo": lo, "hi": hi, "n": int(m.sum()), "max_ulp": float(e[k]),
            "mean_ulp": _mean(e), "worst_input": float(x[m][k]),
            "worst_input_hex": fmt.hex(x[m][k]),
        })
    return result


def errors_against_x(impl: Implementation, dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """(x, ulp error) for plots."""
    fmt = get_format(dtype)
    tab = data.table(fmt.name)
    function = impl.approximates or impl.function
    return tab.x, ulp_error(impl(tab.x), data.exact(tab, function), fmt)

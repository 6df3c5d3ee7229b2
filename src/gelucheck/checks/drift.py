"""Drift of the tanh form from exact GELU: as mathematics (both correctly rounded) and as a
backend computes them, per dtype (design.md, Checks)."""
from __future__ import annotations

import numpy as np

from ..backends import Implementation, ImplementationError
from ..formats import get_format
from ..ulp import Exact, ulp_error
from . import data, minimum
from .accuracy import worst_index


def _compare(x: np.ndarray, exact_out: np.ndarray, tanh_out: np.ndarray, fmt) -> dict:
    """How two outputs of the same inputs differ, in ulps of the first and absolutely."""
    a, b = exact_out.astype(np.float64), tanh_out.astype(np.float64)
    # Where either output is not finite (an overflow, a NaN) the difference says nothing of
    # the approximation: those are counted apart; accuracy results report them in full.
    finite = np.isfinite(a) & np.isfinite(b)
    exact = Exact(a, np.copysign(0.0, a))  # a is representable: a zero residual, signed like a
    ulps = np.where(finite, ulp_error(b, exact, fmt), 0.0)
    absolute = np.where(finite, np.abs(a - b), 0.0)
    i, j = worst_index(ulps), worst_index(absolute)
    return {"n_inputs": len(x), "differ_fraction": float(np.mean(a != b)),
            "nonfinite_differ": int(np.count_nonzero(~finite & (a != b))),
            "max_ulp": float(ulps[i]), "at_ulp": float(x[i]), "at_ulp_hex": fmt.hex(x[i]),
            "max_abs": float(absolute[j]), "at": float(x[j]), "at_hex": fmt.hex(x[j])}


def reference_drift(dtype: str) -> dict:
    """Correctly rounded exact GELU against the correctly rounded tanh form."""
    fmt = get_format(dtype)
    tab = data.table(fmt.name)
    out = {"kind": "drift", "backend": "reference", "exact_implementation": "gelu",
           "tanh_implementation": "gelu_tanh", "dtype": fmt.name}
    out.update(_compare(tab.x, tab.rounded("gelu"), tab.rounded("gelu_tanh"), fmt))
    out["minimum_shift"] = float(minimum.true_minimum("gelu_tanh")[0]
                                 - minimum.true_minimum("gelu")[0])
    return out


def backend_drift(exact_impl: Implementation | None, tanh_impl: Implementation,
                  dtype: str) -> dict:
    """A backend's exact GELU against its tanh form (or a stand-in), on the stored inputs;
    with no exact GELU of its own, the correctly rounded one stands in."""
    fmt = get_format(dtype)
    tab = data.table(fmt.name)
    x = tab.x
    out = {"kind": "drift", "backend": exact_impl.backend if exact_impl else "reference",
           "exact_implementation": exact_impl.name if exact_impl else "gelu",
           "tanh_implementation": tanh_impl.id, "dtype": fmt.name, "device": tanh_impl.device,
           "error": None}
    try:
        exact_out = exact_impl(x) if exact_impl else tab.rounded("gelu")
        out.update(_compare(x, exact_out, tanh_impl(x), fmt))
    except ImplementationError as exc:
        out["error"] = str(exc)
        return out
    lows = [minimum.check(exact_impl, fmt.name) if exact_impl else _reference_minimum(fmt),
            minimum.check(tanh_impl, fmt.name)]
    if all(m and "error" not in m for m in lows):
        centre = [(m["plateau_lo"] + m["plateau_hi"]) / 2 for m in lows]
        out["minimum_shift"] = centre[1] - centre[0]
        out["minimum_value_shift"] = lows[1]["value"] - lows[0]["value"]
    return out


def _reference_minimum(fmt) -> dict:
    """The correctly rounded exact GELU's own minimum, as if it were an implementation."""
    x_star = float(minimum.true_minimum("gelu")[0])
    return {"plateau_lo": x_star, "plateau_hi": x_star,
            "value": float(minimum.true_minimum("gelu")[1])}


def pairs(impls: list[Implementation]) -> list[tuple[Implementation | None, Implementation]]:
    """(exact GELU, tanh form or stand-in) pairs: the twin of the same backend and name, else
    the backend's first exact GELU, else None: the correctly rounded exact GELU."""
    exact = [i for i in impls if i.function == "gelu" and not i.approximates]
    out = []
    for t in impls:
        if t.function != "gelu_tanh" and not t.approximates:
            continue
        twins = [e for e in exact if e.backend == t.backend and e.name == t.name]
        same_backend = [e for e in exact if e.backend == t.backend]
        partners = twins or same_backend
        out.append((partners[0] if partners else None, t))
    return out

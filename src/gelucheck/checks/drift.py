"""Drift of the tanh form from exact GELU: as mathematics (both correctly rounded) and as a
backend computes them, per dtype (docs/design.md, Checks)."""
from __future__ import annotations

import numpy as np

from ..backends import Implementation, ImplementationError
from ..formats import Format
from ..functions import GELU, GELU_TANH
from ..results import DriftFigures, DriftResult, Failure, MinimumFinding
from ..ulp import ulp
from . import minimum, reference_data
from .accuracy import worst_index


def compare_outputs(x: np.ndarray, first: np.ndarray, second: np.ndarray, fmt: Format,
                    reference: np.ndarray) -> DriftFigures:
    """How two outputs of the same inputs differ: absolutely, and in ulps of the correctly
    rounded value at each input (``reference``, of the first's function) - a unit that means
    the same for both outputs and stays meaningful where one of them is zero (in ulps of a
    zero output, the smallest subnormal, one flushed result read 1e38 ulps)."""
    a, b = first.astype(np.float64), second.astype(np.float64)
    # Where either output is not finite (an overflow, a NaN) the difference says nothing of
    # the approximation: those are counted apart; accuracy results report them in full.
    finite = np.isfinite(a) & np.isfinite(b)
    differ = (a != b) & ~(np.isnan(a) & np.isnan(b))  # a NaN from both is no difference
    with np.errstate(over="ignore", invalid="ignore"):
        absolute = np.where(finite, np.abs(a - b), 0.0)
        ulps = np.where(finite, absolute / ulp(reference, fmt), 0.0)
    i, j = worst_index(ulps), worst_index(absolute)
    return DriftFigures(
        n_inputs=len(x), differ_fraction=float(np.mean(differ)),
        nonfinite_differ=int(np.count_nonzero(~finite & differ)),
        max_ulp=float(ulps[i]), at_ulp=float(x[i]), at_ulp_hex=fmt.hex(x[i]),
        max_abs=float(absolute[j]), at=float(x[j]), at_hex=fmt.hex(x[j]))


def reference_drift(fmt: Format) -> DriftResult:
    """Correctly rounded exact GELU against the correctly rounded tanh form."""
    tab = reference_data.table(fmt, GELU)
    shift = float(minimum.true_minimum(GELU_TANH)[0] - minimum.true_minimum(GELU)[0])
    return DriftResult("reference", GELU.name, GELU_TANH.name, fmt.name,
                       figures=compare_outputs(tab.x, tab.rounded(GELU), tab.rounded(GELU_TANH),
                                               fmt, tab.rounded(GELU)),
                       minimum_shift=shift)


def _centre_and_value(found: MinimumFinding | Failure | None) -> tuple[float, float] | None:
    if not isinstance(found, MinimumFinding):
        return None
    return (found.plateau_lo + found.plateau_hi) / 2, found.value


def backend_drift(exact_impl: Implementation | None, tanh_impl: Implementation, fmt: Format,
                  minima: dict | None = None) -> DriftResult:
    """A backend's exact GELU against its tanh form (or a stand-in), on the stored inputs;
    with no exact GELU of its own, the correctly rounded one stands in. ``minima`` holds the
    minimum findings already measured, by (implementation id, function name, format)."""
    tab = reference_data.table(fmt, GELU)
    x = tab.x
    out = DriftResult(exact_impl.backend if exact_impl else "reference",
                      exact_impl.name if exact_impl else GELU.name, tanh_impl.id, fmt.name,
                      device=tanh_impl.device)
    try:
        exact_out = exact_impl(x) if exact_impl else tab.rounded(GELU)
        unit_of = exact_impl.reference_function if exact_impl else GELU
        out.figures = compare_outputs(x, exact_out, tanh_impl(x), fmt, tab.rounded(unit_of))
    except ImplementationError as exc:
        out.failure = Failure(str(exc))
        return out
    minima = minima or {}

    def found(impl):
        key = (impl.id, impl.function.name, fmt)
        return minima[key] if key in minima else minimum.check(impl, fmt)

    x_star, v_star = minimum.true_minimum(GELU)
    lows = [_centre_and_value(found(exact_impl)) if exact_impl else (float(x_star),
                                                                      float(v_star)),
            _centre_and_value(found(tanh_impl))]
    exact_low, tanh_low = lows
    if exact_low is not None and tanh_low is not None:
        out.minimum_shift = tanh_low[0] - exact_low[0]
        out.minimum_value_shift = tanh_low[1] - exact_low[1]
    return out


def runtime_drift(first: Implementation, second: Implementation, fmt: Format) -> DriftResult:
    """Two implementations against each other on the stored inputs: how far apart their
    outputs are (in ulps of the first's function, correctly rounded), and where each puts
    GELU's minimum."""
    result = backend_drift(first, second, fmt)
    result.backend, result.pair = first.backend, "runtimes"
    result.exact_implementation = f"{first.name}@{first.function.name}"
    result.tanh_implementation = f"{second.id}@{second.function.name}"
    return result


def pairs(impls: list[Implementation]) -> list[tuple[Implementation | None, Implementation]]:
    """(exact GELU, tanh form or stand-in) pairs: the twin of the same backend and name, else
    the backend's first exact GELU, else None: the correctly rounded exact GELU."""
    exact = [i for i in impls if i.function == GELU and not i.approximates]
    out = []
    for t in impls:
        if t.function != GELU_TANH and not t.approximates:
            continue
        twins = [e for e in exact if e.backend == t.backend and e.name == t.name]
        same_backend = [e for e in exact if e.backend == t.backend]
        partners = twins or same_backend
        out.append((partners[0] if partners else None, t))
    return out

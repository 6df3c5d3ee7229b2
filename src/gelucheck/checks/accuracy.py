"""Ulp and absolute error of one implementation in one dtype, overall and per region."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..backends import Implementation, ImplementationError
from ..formats import Format
from ..results import AccuracyResult, ErrorFigures, Failure
from ..ulp import abs_error
from .case import Case
from .regions import REGIONS, mask, region


def worst_index(errors: np.ndarray) -> int:
    """Index of the largest error (an infinite one first)."""
    return int(np.argmax(np.where(np.isnan(errors), -1.0, errors)))


def correctly_rounded(y: np.ndarray, rounded: np.ndarray) -> np.ndarray:
    """Where y is the correctly rounded value (zeros of either sign alike; NaN for NaN).

    Decided by value, not by the ulp error: an exact value a hair from a rounding tie (GELU
    at a subnormal x is x/2 + x²φ(0)) has a residual that is -0.5 as a float64, so a result
    rounded the wrong way scores exactly 0.5 ulp and must still count as a miss."""
    a, b = y.astype(np.float64), rounded.astype(np.float64)
    return (a == b) | (np.isnan(a) & np.isnan(b))


def _mean(errors: np.ndarray) -> float:
    """The mean of the finite errors; where their sum would overflow (an approximation's
    errors near 1e300 ulps in float64 tails), taken scaled by the largest, so that the mean is
    a number, not inf."""
    finite = errors[np.isfinite(errors)]
    if not finite.size:
        return float("inf")
    top = float(finite.max())
    if top > 1e300:
        return float((finite / top).mean()) * top
    return float(finite.mean())


def measure(impl: Implementation, fmt: Format, keep_errors: bool = False) -> AccuracyResult:
    """The accuracy of ``impl`` in ``fmt`` against the reference of its function (exact GELU
    for a stand-in such as quick_gelu); with ``keep_errors``, the per-input errors too."""
    return measure_case(Case.load(impl, fmt), keep_errors)


def measure_case(case: Case, keep_errors: bool = False) -> AccuracyResult:
    """measure, of a case loaded by the caller (which hands it on to the other checks)."""
    from ..backends import identity

    impl, fmt, function, x = case.impl, case.fmt, case.function, case.x
    result = AccuracyResult(identity(impl, fmt), function.name,
                            impl.how(fmt), impl.description)
    try:
        y = case.outputs
    except ImplementationError as exc:
        result.failure, result.n_tried = Failure(str(exc), exc.traceback), len(x)
        return result
    errors = case.errors
    absolute = abs_error(y, case.exact, fmt)
    wrong = ~correctly_rounded(y, case.rounded)
    i = worst_index(errors)
    j = worst_index(absolute)
    regions = []
    for name, lo, hi in REGIONS:
        m = mask(x, lo, hi)
        if m.any():
            e = errors[m]
            k = worst_index(e)
            regions.append(region(name, lo, hi, m.sum(), e[k], _mean(e), x[m][k], fmt,
                                  int(np.count_nonzero(wrong[m]))))
    result.figures = ErrorFigures(
        n_inputs=len(x), max_ulp=float(errors[i]), mean_ulp=_mean(errors),
        n_infinite=int(np.count_nonzero(~np.isfinite(errors))),
        not_correctly_rounded=int(np.count_nonzero(wrong)),
        worst_input=float(x[i]), worst_input_hex=fmt.hex(x[i]), computed=float(y[i]),
        exact=float(case.exact_values[i]), max_abs_error=float(absolute[j]),
        max_abs_at=float(x[j]), regions=regions)
    impossible = np.flatnonzero(function.impossible(x, y))
    if impossible.size:
        k = int(impossible[0])
        result.figures = replace(result.figures, impossible=int(impossible.size),
                                 impossible_at=float(x[k]), impossible_at_hex=fmt.hex(x[k]),
                                 impossible_computed=float(y[k]))
    result.all_nan = bool(np.all(np.isnan(y.astype(np.float64))))
    if keep_errors:
        result.errors, result.outputs = errors, y
    return result

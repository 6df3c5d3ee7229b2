"""The sign of a derivative (docs/design.md, Checks): a gradient with the wrong sign sends
training the wrong way however small its ulp error. Over the stored inputs, the results whose
sign differs from the exact value's, and the zeros where the correctly rounded value is not
zero; around x*, where GELU′ changes sign, the computed crossing against x*."""
from __future__ import annotations

import numpy as np

from ..backends import Implementation, ImplementationError
from ..formats import Format
from ..functions import DERIVATIVE, get_function
from ..reference.mpref import round_value
from ..results import Failure, SignFinding
from . import minimum
from .case import Case

EXAMPLES = 5


def applies(impl: Implementation) -> bool:
    return impl.reference_function.family == DERIVATIVE


def check(impl: Implementation, fmt: Format, case: Case | None = None
          ) -> SignFinding | Failure | None:
    """The sign finding of a derivative (None for other functions), from the measurement's
    case where the caller has one."""
    if not applies(impl):
        return None
    case = case or Case.load(impl, fmt)
    x = case.x
    try:
        y = case.outputs
        crossing = _crossing(impl, fmt)
    except ImplementationError as exc:
        return Failure(str(exc))
    computed = y.astype(np.float64)
    exact = case.exact_values
    rounded = case.rounded.astype(np.float64)
    nan = np.isnan(computed)
    wrong = ~nan & (computed != 0) & (np.signbit(computed) != np.signbit(exact))
    false_zero = (computed == 0) & (rounded != 0)
    worst = np.concatenate([_largest(np.flatnonzero(m), computed, exact)
                            for m in (wrong, false_zero)])[:EXAMPLES]  # wrong signs first
    return SignFinding(
        n_wrong_sign=int(wrong.sum()), n_false_zero=int(false_zero.sum()),
        examples=[{"x": float(x[i]), "x_hex": fmt.hex(x[i]), "computed": float(computed[i]),
                   "exact": float(exact[i])} for i in worst],
        **crossing)


def _largest(indices: np.ndarray, computed: np.ndarray, exact: np.ndarray) -> np.ndarray:
    return indices[np.argsort(-np.abs(computed[indices] - exact[indices]), kind="stable")]


def _crossing(impl: Implementation, fmt: Format) -> dict:
    """Where the computed derivative changes sign around the zero of the exact one (x* of the
    function it differentiates), over the same window as the minimum check."""
    of = impl.reference_function.derivative_of
    integrand = get_function(of) if of is not None else None
    if integrand is None or integrand.curvature is None:
        raise ValueError(f"{impl.reference_function.name} is no derivative of a function "
                         "with a minimum: no sign change to look for")
    x_star = minimum.true_minimum(integrand)[0]
    rounded_x = fmt.from_bits(round_value(x_star, fmt).bits)
    xs, _ = minimum.window(fmt, rounded_x, integrand.curvature)
    y = impl(xs).astype(np.float64)
    negative, positive = np.flatnonzero(y < 0), np.flatnonzero(y > 0)
    lo = float(xs[negative[-1]]) if negative.size else None
    hi = float(xs[positive[0]]) if positive.size else None
    changes = int(np.count_nonzero(np.diff(np.sign(y[y != 0])) != 0))
    # compared with x* itself (an mpf), not its rounding, which may be a point of the window
    return {"x_star": float(x_star), "crossing_lo": lo, "crossing_hi": hi,
            "sign_changes": changes,
            "x_star_in_crossing": bool(lo is not None and hi is not None
                                       and lo < x_star < hi and changes == 1)}

"""The independent second reference: certified intervals from Arb (python-flint).

Where both ends of Arb's ball round to the same value in a format, that value is proven to be
the correctly rounded result (docs/design.md, References).
"""
from __future__ import annotations

import math

from ..formats import Format
from ..functions import CDF, GELU_TANH, Function, get_function
from .mpformulas import TANH_CUBIC
from .rounding import round_exact

MAX_PRECISION = 4096


def available() -> bool:
    try:
        import flint  # noqa: F401
    except ImportError:
        return False
    return True


def version() -> str | None:
    try:
        import flint
    except ImportError:
        return None
    return flint.__version__


def _ball(function: Function, x: float):
    import flint

    a = flint.arb(x)  # exact: every double is a dyadic rational
    if function != GELU_TANH:
        phi = (-a / flint.arb(2).sqrt()).erfc() / 2
        return phi if function.family == CDF else a * phi
    u = (2 / flint.arb.pi()).sqrt() * (a + flint.arb(TANH_CUBIC) * a**3)
    # x·σ(2u), written so that the exponential never overflows Arb's exponent range.
    if x >= 0:
        return a / (1 + (-2 * u).exp())
    e = (2 * u).exp()
    return a * e / (1 + e)


def _end_bits(end, fmt: Format) -> int:
    man, exp = end.man_exp()
    return round_exact(int(man), int(exp), fmt)


def certify(function: str | Function, x: float, fmt: Format) -> int | None:
    """The proven correctly rounded encoding of function(x) in fmt, or None if Arb could not
    narrow its ball enough by MAX_PRECISION bits."""
    import flint

    function = get_function(function)
    magnitude_mask = fmt.sign_bit - 1
    # The sign of a zero result is known mathematically: Φ > 0; GELU and its tanh form have
    # the sign of x. A ball straddling 0 only says |value| is below half the subnormal quantum.
    zero_sign = fmt.sign_bit if function.family != CDF and math.copysign(1.0, x) < 0 else 0
    prec = 128
    while prec <= MAX_PRECISION:
        old = flint.ctx.prec
        flint.ctx.prec = prec
        try:
            ball = _ball(function, x)
            if ball.is_finite():
                lo, hi = _end_bits(ball.lower(), fmt), _end_bits(ball.upper(), fmt)
                if lo == hi:
                    return lo if lo & magnitude_mask else zero_sign
                if not (lo & magnitude_mask or hi & magnitude_mask):
                    return zero_sign
        finally:
            flint.ctx.prec = old
        prec *= 2
    return None

"""The independent second reference: certified intervals from Arb (python-flint).

Where both ends of Arb's ball round to the same value in a format, that value is proven to be
the correctly rounded result (docs/design.md, References).
"""
from __future__ import annotations

from contextlib import contextmanager

from ..errors import UsageError
from ..formats import FLOAT64, Format
from ..functions import Function, get_function
from .rounding import round_exact

MAX_PRECISION = 4096
PRECISIONS = [128 << k for k in range((MAX_PRECISION // 128).bit_length())]  # 128 ... MAX


def _precision(bits: int):
    """Arb's working precision, restored after: the ball's ends are read at it too."""
    return flint_setting("prec", bits)


@contextmanager
def flint_setting(name: str, value: int):
    """One of python-flint's context settings (prec, cap: a series' length), restored
    after."""
    import flint

    old = getattr(flint.ctx, name)
    setattr(flint.ctx, name, value)
    try:
        yield
    finally:
        setattr(flint.ctx, name, old)


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

    if function.arb is None:
        raise UsageError(f"{function.name} has no Arb formula in its row (functions.py)")
    return function.arb(flint.arb(x))  # exact: every double is a dyadic rational


def _end_bits(end, fmt: Format) -> int:
    man, exp = end.man_exp()
    return round_exact(int(man), int(exp), fmt)


def certify(function: str | Function, x: float, fmt: Format) -> int | None:
    """The proven correctly rounded encoding of function(x) in fmt, or None if Arb could not
    narrow its ball enough by MAX_PRECISION bits."""
    function = get_function(function)
    magnitude_mask = fmt.sign_bit - 1
    # The sign of a zero result is known mathematically: Φ > 0; GELU and its tanh form have
    # the sign of x. A ball straddling 0 only says |value| is below half the subnormal quantum.
    zero_sign = fmt.sign_bit if function.zero_is_negative(x) else 0
    for prec in PRECISIONS:
        with _precision(prec):
            ball = _ball(function, x)
            if ball.is_finite():
                lo, hi = _end_bits(ball.lower(), fmt), _end_bits(ball.upper(), fmt)
                if lo == hi:
                    return lo if lo & magnitude_mask else zero_sign
                if not (lo & magnitude_mask or hi & magnitude_mask):
                    return zero_sign
    return None


def rounded(function: str | Function, x: float, fmt: Format) -> tuple[int, int, int] | None:
    """(encoding in fmt, float64 encoding, side) of function(x), proven: both ends of Arb's
    ball round alike in fmt and in float64, and the ball lies wholly on one side of the fmt
    result (side +1 above it, -1 below). None where the ball did not narrow that far by
    MAX_PRECISION bits, or straddles zero. Several times faster than mpmath."""
    import flint

    function = get_function(function)
    for prec in PRECISIONS:
        with _precision(prec):
            ball = _ball(function, x)
            if ball.is_finite() and not ball.contains(0):
                lo, hi = ball.lower(), ball.upper()
                bits = {_end_bits(lo, fmt), _end_bits(hi, fmt)}
                bits64 = {_end_bits(lo, FLOAT64), _end_bits(hi, FLOAT64)}
                if len(bits) == len(bits64) == 1:
                    (b,), (b64,) = bits, bits64
                    value = flint.arb(float(fmt.from_bits(b)))  # exact: a dyadic rational
                    if ball > value or ball < value:
                        return b, b64, 1 if ball > value else -1
    return None

"""The independent second reference: certified intervals from Arb (python-flint).

Where both ends of Arb's ball round to the same value in a format, that value is proven to be
the correctly rounded result (docs/design.md, References).
"""
from __future__ import annotations

from contextlib import contextmanager

from ..formats import FLOAT64, Format
from ..functions import Function, get_function
from .mpformulas import TANH_CUBIC
from .rounding import round_exact

MAX_PRECISION = 4096
PRECISIONS = [128 << k for k in range((MAX_PRECISION // 128).bit_length())]  # 128 ... MAX


@contextmanager
def _precision(bits: int):
    """Arb's working precision, restored after: the ball's ends are read at it too."""
    import flint

    old = flint.ctx.prec
    flint.ctx.prec = bits
    try:
        yield
    finally:
        flint.ctx.prec = old


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


def _phi(a):
    import flint

    return (-a / flint.arb(2).sqrt()).erfc() / 2


def _pdf(a):
    import flint

    return (-a * a / 2).exp() / (2 * flint.arb.pi()).sqrt()


def _tanh_u(a):
    import flint

    c, k = (2 / flint.arb.pi()).sqrt(), flint.arb(TANH_CUBIC)
    return c * (a + k * a**3), c * (1 + 3 * k * a * a)


def _gelu_tanh(a):
    # x·σ(2u), written so that the exponential never overflows Arb's exponent range.
    u, _ = _tanh_u(a)
    if a >= 0:
        return a / (1 + (-2 * u).exp())
    e = (2 * u).exp()
    return a * e / (1 + e)


def _gelu_tanh_grad(a):
    u, du = _tanh_u(a)
    e = (-2 * abs(u)).exp()
    half_one_plus_t = 1 / (1 + (-2 * u).exp()) if a >= 0 else (2 * u).exp() / (1 + (2 * u).exp())
    return half_one_plus_t + a * 2 * e / (1 + e) ** 2 * du


# The same functions as mpformulas, in Arb's interval arithmetic (independent code).
_BALLS = {"phi": _phi, "gelu": lambda a: a * _phi(a), "gelu_tanh": _gelu_tanh,
          "phi_grad": _pdf, "gelu_grad": lambda a: _phi(a) + a * _pdf(a),
          "gelu_tanh_grad": _gelu_tanh_grad}


def _ball(function: Function, x: float):
    import flint

    return _BALLS[function.name](flint.arb(x))  # exact: every double is a dyadic rational


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

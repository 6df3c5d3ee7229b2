"""The reference of record: Φ, GELU and its tanh form in mpmath, correctly rounded (Ziv's loop).

Each value is computed at a working precision, then rounded into the format from both ends of
an error band around it; only when both ends agree is the rounding decision proven safe for
that band, otherwise the precision doubles.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import mpmath
from mpmath import mp

from ..formats import FLOAT64, Format
from ..functions import GELU, GELU_TANH, Function, get_function
from .rounding import residual_ulps, round_exact

START_PRECISION = 128
MAX_PRECISION = 8192
# mpmath's elementary and erfc results are good to a few ulps of the working precision; the
# compositions below add a few more roundings. 2**-(prec-24) is a wide margin on top.
ERROR_BITS_LOST = 24


def evaluate(function: str | Function, x: float, prec: int = START_PRECISION) -> mpmath.mpf:
    """The function at the binary value x, at ``prec`` bits."""
    fn = get_function(function).mp
    with mp.workprec(prec):
        return fn(mpmath.mpf(x))


def man_exp(value) -> tuple[int, int]:
    sign, man, exp, _ = value._mpf_
    if not man:
        return 0, 0
    return (-man if sign else man), exp


@dataclass(frozen=True)
class Rounded:
    bits: int  # the correctly rounded encoding in the target format
    float64_bits: int  # the correctly rounded float64 of the exact value
    residual: float  # (exact - rounded) / ulp(exact), in the target format's ulps
    precision: int  # the working precision at which the decision was proven safe


# From |x| = 64 on every function has saturated: Q(x) = 1 - Φ(|x|) < exp(-x²/2) < 2**-2954,
# |x|·φ(x) < 2**-2880, and the tanh form's exp(-2u) is smaller still. The correctly rounded
# result is x, 1 or a zero in every format, and the residual - at most 2**-2880 * 2**1074 ulps
# even at the float64 subnormal quantum - rounds to ±0 in float64. (mpmath's erfc also slows
# to minutes near |x| = 1e5.)
SATURATION = 64.0


def _saturated(function: Function, x: float, fmt: Format) -> Rounded:
    value = function.saturated(x)
    residual = math.copysign(0.0, function.residual_side(x))
    return Rounded(int(fmt.bits_of(value)), int(FLOAT64.bits_of(value)), residual, 0)


def round_value(value, fmt: Format) -> Rounded:
    """An mpf known to far more bits than fmt has (a constant such as GELU(x*)), rounded."""
    man, exp = man_exp(value)
    bits = round_exact(man, exp, fmt)
    return Rounded(bits, round_exact(man, exp, FLOAT64), residual_ulps(man, exp, bits, fmt), 0)


def _band(function: Function, x: float, man: int, exp: int, slack: int, prec: int) -> int:
    """The error band 2**-slack relative to the value - or, where the function's terms cancel
    (GELU′ near x*), relative to the size of its terms - in units of 2**(exp - slack)."""
    if function.mp_scale is None:
        return abs(man)
    with mp.workprec(prec):
        scale = function.mp_scale(mpmath.mpf(x))
        return int(mpmath.ceil(mpmath.ldexp(scale, -exp))) + 1


def correctly_rounded(function: str | Function, x: float, fmt: Format) -> Rounded:
    function = get_function(function)
    if abs(x) >= SATURATION:
        return _saturated(function, x, fmt)
    prec = START_PRECISION
    while prec <= MAX_PRECISION:
        man, exp = man_exp(evaluate(function, x, prec))
        if man == 0:  # exact zero: GELU(±0)
            # GELU(-0) = -0·Φ(-0) = -0: mpmath has no signed zero, IEEE does
            sign = fmt.sign_bit if function.zero_is_negative(x) else 0
            sign64 = FLOAT64.sign_bit if sign else 0
            return Rounded(sign, sign64, 0.0, prec)
        slack = prec - ERROR_BITS_LOST
        band = _band(function, x, man, exp, slack, prec)
        lo, hi = (man << slack) - band, (man << slack) + band
        ends = {round_exact(lo, exp - slack, f) == round_exact(hi, exp - slack, f)
                for f in {fmt, FLOAT64}}
        if ends == {True}:
            bits = round_exact(man, exp, fmt)
            residual = residual_ulps(man, exp, bits, fmt)
            if residual == 0 and x != 0:  # transcendental: only its side is unseen here
                residual = math.copysign(0.0, function.residual_side(x))
            return Rounded(bits, round_exact(man, exp, FLOAT64), residual, prec)
        prec *= 2
    raise ArithmeticError(f"{function}({x!r}) could not be rounded safely at {MAX_PRECISION} bits")


def minimum(function: str | Function, digits: int = 40):
    """(x*, f(x*)) of the negative minimum, solved from f'(x) = 0 near -0.75."""
    function = get_function(function)
    if not function.has_minimum:
        raise ValueError(f"{function.name} has no interior minimum")
    with mp.workdps(digits):
        x = mpmath.findroot(function.mp_derivative, mpmath.mpf("-0.75"))
        return x, function.mp(x)


def gelu_minimum(digits: int = 40):
    """(x*, GELU(x*)) of the negative minimum, solved from GELU'(x) = 0."""
    return minimum(GELU, digits)


def gelu_tanh_minimum(digits: int = 40):
    return minimum(GELU_TANH, digits)

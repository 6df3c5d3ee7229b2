"""The float64 search's fast reference: local Taylor expansions certified by Arb
(docs/design.md, The float64 search's reference, which proves the bound computed here).

A segment of one binade (a dyadic part of its encodings) gets the Taylor coefficients of the
function at a double near its centre, from Arb's power series (python-flint's ``arb_series``
runs the function's own Arb formula on a series), and a remainder bounded by the next
coefficient of the same series taken over the whole segment (a ball): every point of the
segment is then one short polynomial away, evaluated in double-double (reference.py: numba
or NumPy). Written here because no library evaluates a certified expansion at millions of
doubles.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..functions import Function
from ..reference import arbformulas
from ..reference.arbref import _precision, flint_setting

# Formulas for a series where the row's own branches on the sign of x (a series has none)
SERIES = {"gelu_tanh": arbformulas.gelu_tanh_series,
          "gelu_tanh_grad": arbformulas.gelu_tanh_grad_series}
DEGREE = 16  # coefficients c0 .. c15; the remainder from c16 over the segment
PRECISION = 192  # Arb's working precision for the coefficients
# The bound each segment must meet, in float64 ulps of the value: the error figures the
# search ranks by are then good to 2^-13 ulps; what it reports is settled by mpmath.
ULP_FRACTION = 2.0**-13
# Rounding of the evaluation (design.md): 64 units of 2^-53 on the tail's terms, 2^-100 on
# the head's, and one subnormal quantum per operation of the tail where it underflows.
TAIL_ROUNDING = 2.0**-47
HEAD_ROUNDING = 2.0**-100


@dataclass(frozen=True, eq=False)
class Expansion:
    """f(centre + h) = (c0 + c1·t + t²·Σ tail[k]·t^k)·2^scale with t = h·2^-step, within
    bound·2^scale for |h| <= radius: the coefficients scaled by powers of 2^step so that
    every term is near its size in the sum (no overflow where c1 dwarfs a tiny f(centre)).
    c0 and c1 in double-double (hi, lo); c1's high part also split in two halves of 26
    bits, so that its product with t is exact."""

    centre: float
    radius: float
    scale: int
    step: int
    c0: tuple[float, float]
    c1: tuple[float, float]
    c1_halves: tuple[float, float]
    tail: np.ndarray  # c2 .. c15, as the compiled loop takes them
    bound: float


def _ldexp(value, exponent: int) -> float:
    """An Arb ball's midpoint times 2^exponent, rounded to a double (_round_int)."""
    man, exp = value.mid().man_exp()
    return _round_int(int(man), int(exp) + exponent)


def _round_int(man: int, exp: int) -> float:
    """man·2^exp rounded to the nearest double: the integer rounded once to 53 bits, the
    exponent applied exactly - except in the subnormal range, where ldexp rounds a second
    time: off by at most one quantum there (the tail's tiniest coefficients), which the
    bound's allowance for underflow covers."""
    if man == 0:
        return 0.0
    bits = abs(man).bit_length()
    if bits > 53:  # round the integer first, exactly once, to 53 bits
        shift = bits - 53
        return math.ldexp(float(_round_nearest_even(man, shift)), exp + shift)
    return math.ldexp(float(man), exp)


def _round_nearest_even(man: int, shift: int) -> int:
    sign = -1 if man < 0 else 1
    m = abs(man)
    q, r = divmod(m, 1 << shift)
    half = 1 << (shift - 1)
    if r > half or (r == half and q & 1):
        q += 1
    return sign * q


def _double_double(value, exponent: int) -> tuple[float, float]:
    """(hi, lo) of a ball's midpoint times 2^exponent, hi the nearest double, lo the nearest
    double to the rest (in integers: exact)."""
    man, exp = value.mid().man_exp()
    return split_exact(int(man), int(exp) + exponent)


def split_exact(man: int, exp: int) -> tuple[float, float]:
    """man·2^exp as hi + lo: hi the nearest double, lo the nearest double to the rest."""
    hi = _round_int(man, exp)
    if hi == 0 or not math.isfinite(hi):
        return hi, 0.0
    mantissa, hi_exp = math.frexp(hi)
    hi_man, hi_exp = int(math.ldexp(mantissa, 53)), hi_exp - 53  # hi = hi_man·2^hi_exp
    common = min(exp, hi_exp)
    rest = (man << (exp - common)) - (hi_man << (hi_exp - common))
    return hi, _round_int(rest, common)


def _halves(c: float) -> tuple[float, float]:
    """c = a + b with a of at most 26 significant bits and b of at most 27, exactly."""
    if c == 0 or not math.isfinite(c):
        return c, 0.0
    m, e = math.frexp(c)
    man = int(math.ldexp(m, 53))
    a = _round_nearest_even(man, 27) << 27
    return math.ldexp(float(a), e - 53), math.ldexp(float(man - a), e - 53)


def _upper(ball) -> float:
    """An upper bound of |ball| as a double (rounded up by a relative 2^-50)."""
    value = float(abs(ball).upper())
    return value * (1 + 2.0**-50) if value else 0.0


def _ulp_floor(ball) -> int:
    """The exponent of a lower bound of float64's ulp over the values in ``ball`` (the
    segment's range): -1074 where it reaches below the normal range or contains 0."""
    low = abs(ball).lower()  # an exact point
    if not low > 0:
        return -1074
    man, exp = low.mid().man_exp()
    return max(int(exp) + int(man).bit_length() - 1 - 52, -1074)


def build(function: Function, low: float, high: float) -> Expansion | None:
    """The expansion of ``function`` over the doubles [low, high] (one binade's part, both of
    one sign), or None where DEGREE coefficients do not meet ULP_FRACTION over it (a
    narrower segment will)."""
    import flint

    formula = SERIES.get(function.name, function.arb)
    assert formula is not None  # (Reference refuses a function without one)
    centre = _midpoint(low, high)
    radius = max(centre - low, high - centre)  # exact: one binade (Sterbenz)
    with _precision(PRECISION), flint_setting("cap", DEGREE + 1):  # the series' length
        try:
            exact = formula(flint.arb_series([flint.arb(centre), 1], prec=DEGREE)).coeffs()
            around = formula(flint.arb_series([flint.arb(centre, radius), 1],
                                              prec=DEGREE + 1)).coeffs()
        except (ValueError, ZeroDivisionError):  # a ball too wide to divide by: narrower
            return None
        if not all(c.is_finite() for c in [*exact, *around]) or exact[0] == 0:
            return None
        man, exp = exact[0].mid().man_exp()
        scale = int(exp) + int(man).bit_length() - 1  # |c0|·2^-scale in [1, 2)
        r = flint.arb(radius)
        terms = [abs(c.mid()) * r**k for k, c in enumerate(exact)]
        tail_size = sum(terms[2:], flint.arb(0))
        bound = (abs(around[DEGREE]) * r**DEGREE
                 + sum((c.rad() * r**k for k, c in enumerate(exact)), flint.arb(0))
                 + HEAD_ROUNDING * (terms[0] + terms[1]) + TAIL_ROUNDING * tail_size
                 + flint.arb(2) ** (scale - 1074 + 8))  # underflow in the tail, scaled back
        scaled_bound = _upper(bound * flint.arb(2) ** -scale)  # compared scaled: no underflow
        # (a value far below float64's quantum has an ulp far above it: no overflow)
        if scaled_bound > math.ldexp(ULP_FRACTION, min(_ulp_floor(around[0]) - scale, 1000)):
            return None
        step = math.frexp(radius)[1]  # t = h·2^-step lies within [-1, 1]
        try:
            c0 = _double_double(exact[0], -scale)
            c1 = _double_double(exact[1], step - scale)
            tail = np.array([_ldexp(c, k * step - scale)
                             for k, c in enumerate(exact[2:], start=2)])
        except OverflowError:  # a term far above the value: a narrower segment
            return None
    return Expansion(centre, radius, scale, step, c0, c1, _halves(c1[0]), tail, scaled_bound)


def _midpoint(low: float, high: float) -> float:
    """The double halfway between two doubles of one sign and binade, by their encodings."""
    a = np.array([abs(low), abs(high)]).view(np.int64)
    middle = np.array([(int(a[0]) + int(a[1])) // 2]).view(np.float64)[0]
    return math.copysign(float(middle), low)

"""Exact rounding into each format, against hand derivations and NumPy's own conversions."""
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gelucheck.formats import BFLOAT16, FLOAT16, FLOAT32, FLOAT64, narrow
from gelucheck.reference.rounding import decode, residual_ulps, round_exact


def value(bits, fmt):
    return float(fmt.from_bits(bits))


@pytest.mark.parametrize("man, exp, fmt, expected", [
    (1, 0, FLOAT32, 1.0),
    ((1 << 24) + 1, -24, FLOAT32, 1.0),  # 1 + 2**-24: a tie, to even (down)
    ((1 << 24) + 3, -24, FLOAT32, 1 + 2.0**-22),  # 1 + 3*2**-24: a tie, to even (up)
    ((1 << 25) + 3, -25, FLOAT32, 1 + 2.0**-23),  # just above the tie: up
    (1, -150, FLOAT32, 0.0),  # half the smallest subnormal: a tie to even zero
    (3, -151, FLOAT32, 2.0**-149),  # 0.75 quantum: up to the smallest subnormal
    (3, -150, FLOAT32, 2.0**-148),  # 1.5 quanta: tie to even, 2 quanta
    ((1 << 24) - 1, -150, FLOAT32, 2.0**-126),  # carries out of the subnormals into normals
    ((1 << 25) - 1, 103, FLOAT32, np.inf),  # rounds up past the largest finite
    ((1 << 24) - 1, 104, FLOAT32, (2 - 2.0**-23) * 2.0**127),
    (-1, -1075, FLOAT64, -0.0),
    (3, -1076, FLOAT64, 5e-324),
    (65520, 0, FLOAT16, np.inf),  # float16 overflow threshold: halfway to 2**16, to even: inf
    (65519, 0, FLOAT16, 65504.0),
    (259, -8, BFLOAT16, 1 + 2.0**-6),  # bfloat16 tie 1 + 1.5*2**-7 rounds to even 1 + 2**-6
])
def test_by_hand(man, exp, fmt, expected):
    got = value(round_exact(man, exp, fmt), fmt)
    assert got == expected and np.signbit(got) == np.signbit(expected)


@settings(max_examples=500, deadline=None)
@given(fmt=st.sampled_from([FLOAT16, FLOAT32]),
       x=st.floats(allow_nan=False, allow_infinity=False, width=64))
def test_agrees_with_numpy_conversion_from_float64(fmt, x):
    """NumPy rounds a float64 into float16 and float32 correctly: an independent implementation
    of the same rounding. (Not bfloat16: ml_dtypes before 0.7 went through float32,
    see below.)"""
    f = Fraction(x)
    exp = -(f.denominator.bit_length() - 1)
    with np.errstate(over="ignore"):
        expected = int(fmt.bits_of(np.float64(x)))
    if x == 0:
        return  # a Fraction has no signed zero
    assert round_exact(f.numerator, exp, fmt) == expected


@settings(max_examples=300, deadline=None)
@given(fmt=st.sampled_from([FLOAT16, BFLOAT16, FLOAT32, FLOAT64]),
       bits=st.integers(0, 2**64 - 1))
def test_decode_inverts_round_exact(fmt, bits):
    bits &= (1 << fmt.bits) - 1
    v = fmt.from_bits(bits)
    with np.errstate(invalid="ignore"):  # ml_dtypes' bfloat16 NaN warns in isfinite
        if not np.isfinite(v):
            return
    man, exp = decode(bits, fmt)
    assert round_exact(man, exp, fmt) == bits or man == 0
    assert residual_ulps(man, exp, bits, fmt) == 0.0


def test_the_bfloat16_case_that_double_rounding_gets_wrong():
    """Why the reference never narrows through NumPy: 1 + 2**-8 + 2**-30 lies above the
    bfloat16 tie 1 + 2**-8, so it rounds up to 1 + 2**-7; a narrowing that goes through
    float32 first lands on the float32 tie 1 + 2**-8 (2**-30 is below float32's half ulp) and
    then rounds to even, down to 1 (ml_dtypes before 0.7 did). gelucheck's own roundings must
    give the right answer whatever the installed ml_dtypes does: the exact one, and ``narrow``,
    which the backends' float64-to-bfloat16 results go through."""
    x = 1 + 2.0**-8 + 2.0**-30
    assert value(round_exact((1 << 30) + (1 << 22) + 1, -30, BFLOAT16), BFLOAT16) == 1 + 2.0**-7
    assert float(narrow(np.array([x]), BFLOAT16)[0]) == 1 + 2.0**-7
    assert float(narrow(np.array([-x]), BFLOAT16)[0]) == -(1 + 2.0**-7)


def test_zero_is_positive_zero_and_its_residual_too():
    import math

    assert round_exact(0, 0, FLOAT32) == 0 and round_exact(0, -200, FLOAT16) == 0
    assert math.copysign(1, residual_ulps(0, 0, 0, FLOAT32)) == 1
    one = int(FLOAT32.bits_of(np.float32(1.0)))
    # an exact value has a zero residual signed like itself: + for 1, - for -1
    assert math.copysign(1, residual_ulps(1, 0, one, FLOAT32)) == 1
    assert math.copysign(1, residual_ulps(-1, 0, one | FLOAT32.sign_bit, FLOAT32)) == -1

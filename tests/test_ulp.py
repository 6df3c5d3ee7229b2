"""The ulp metric against hand derivations and against its defining properties."""
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from gelucheck.formats import BFLOAT16, FLOAT16, FLOAT32, FLOAT64
from gelucheck.reference.rounding import decode, residual_ulps, round_exact
from gelucheck.ulp import Exact, abs_error, ulp, ulp_error


@pytest.mark.parametrize("fmt, v, expected", [
    (FLOAT32, 1.0, 2.0**-23),
    (FLOAT32, 1.5, 2.0**-23),
    (FLOAT32, np.nextafter(1.0, 0), 2.0**-24),  # just below a power of two: the lower binade
    (FLOAT32, -2.0, 2.0**-22),
    (FLOAT32, 0.0, 2.0**-149),  # zero and subnormals: the subnormal quantum
    (FLOAT32, 2.0**-140, 2.0**-149),
    (FLOAT32, 2.0**-126, 2.0**-149),
    (FLOAT16, 65504.0, 32.0),
    (FLOAT16, 1e-7, 2.0**-24),
    (BFLOAT16, 1.0, 2.0**-7),
    (BFLOAT16, 3.0e38, 2.0**120),
    (FLOAT64, 1.0, 2.0**-52),
    (FLOAT64, 5e-324, 2.0**-1074),
])
def test_ulp_by_hand(fmt, v, expected):
    assert ulp(v, fmt) == expected


def test_ulp_of_specials():
    assert ulp(np.inf, FLOAT32) == np.inf
    assert np.isnan(ulp(np.nan, FLOAT32))


def test_error_by_hand():
    # 1 + 2**-23 against exact 1: one ulp. Against 1 + 2**-24 (a tie): half an ulp.
    assert ulp_error(np.float32(1 + 2.0**-23), 1.0, FLOAT32) == 1.0
    assert ulp_error(np.float32(1.0), 1 + 2.0**-24, FLOAT32) == 0.5
    # exact value just below 2: ulp is 2**-23 there, so computing 2 is 2**-23/2**-23*... = 0.25
    assert ulp_error(np.float32(2.0), 2 - 2.0**-25, FLOAT32) == 0.25
    # subnormal results: the quantum 2**-149
    assert ulp_error(np.float32(0.0), 3 * 2.0**-150, FLOAT32) == 1.5
    # bfloat16: 1.0078125 computed for exact 1.0 is one ulp
    assert ulp_error(np.asarray(1.0078125, BFLOAT16.dtype), 1.0, BFLOAT16) == 1.0


def test_error_of_specials_is_infinite_or_zero():
    exact = np.array([1.0, 1.0, np.nan, np.inf, np.inf, 0.0, -0.0, 3e38])
    computed = np.array([np.inf, np.nan, np.nan, np.inf, -np.inf, -0.0, 0.0, np.inf],
                        dtype=np.float32)
    assert ulp_error(computed, exact, FLOAT32).tolist() == [np.inf, np.inf, 0, 0, np.inf, 0, 0,
                                                            np.inf]


def test_float64_needs_more_than_53_bits():
    with pytest.raises(TypeError, match="Exact"):
        ulp_error(np.array([1.0]), np.array([1.0]), FLOAT64)


def test_float64_exact_pair_by_hand():
    # v = 1 + 0.3 ulp: 1.0 is 0.3 ulp off, next_up(1) 0.7 ulp off.
    exact = Exact([1.0, 1.0], [0.3, 0.3])
    assert np.allclose(ulp_error([1.0, 1 + 2.0**-52], exact, FLOAT64), [0.3, 0.7], rtol=0,
                       atol=1e-15)
    # v = 1 - 0.25 ulp(v) rounded up to 1: ulp(v) = 2**-53, 1 - 2**-53 is 0.75 ulps away
    assert ulp_error([np.nextafter(1.0, 0)], Exact([1.0], [-0.25]), FLOAT64)[0] == 0.75
    # subnormal: v = 0.4 quantum rounds to 0; one quantum is 0.6 off. No double-double can
    # hold this residual, the pair can.
    assert ulp_error([5e-324], Exact([0.0], [0.4]), FLOAT64)[0] == pytest.approx(0.6, abs=1e-15)
    # huge opposite values must not overflow to an infinite error
    big = np.finfo(np.float64).max
    assert np.isfinite(ulp_error([-big], Exact([big], [0.0]), FLOAT64)[0])


def test_abs_error():
    assert abs_error(np.float32(1.5), 1.25, FLOAT32) == 0.25
    assert abs_error([0.0], Exact([0.0], [0.5]), FLOAT64)[0] == 2.0**-1075
    # the residual is in ulps of the format it rounds to: a float16 exact value 0.25 ulp
    # (2^-12) above 1, computed as 1 + 2^-10, is 0.75 ulp = 3 * 2^-12 off
    assert abs_error([1 + 2.0**-10], Exact([1.0], [0.25]), FLOAT16)[0] == 3 * 2.0**-12
    assert abs_error([0.0], Exact([0.0], [0.5]), FLOAT16)[0] == 2.0**-25


def _dyadic(value: float) -> tuple[int, int]:
    f = Fraction(value)
    return f.numerator, -(f.denominator.bit_length() - 1)


FORMATS_16_32 = st.sampled_from([FLOAT16, BFLOAT16, FLOAT32])


@settings(max_examples=400, deadline=None)
@example(fmt=FLOAT16, v=0.99999)  # rounds up to 1: the neighbour above is 2.02 ulp(v) away
@given(fmt=FORMATS_16_32, v=st.floats(allow_nan=False, allow_infinity=False, width=64))
def test_correct_rounding_is_within_half_an_ulp_and_neighbours_beyond(fmt, v):
    """A value rounded correctly from v has error <= 0.5; its neighbours (0.5, 1.5]."""
    bits = round_exact(*_dyadic(v), fmt)
    rounded = fmt.from_bits(bits)
    if not np.isfinite(rounded):
        return  # overflow: covered by the specials test
    assert ulp_error(rounded, v, fmt) <= 0.5
    for neighbour in (fmt.next_up(rounded), fmt.next_down(rounded)):
        if np.isfinite(neighbour) and float(neighbour) != float(rounded):
            err = float(ulp_error(neighbour, v, fmt))
            # v in the binade below a power of two that it rounded up to: ulp(v) is the lower
            # binade's, and the neighbour above the power of two is up to 2.5 of those away.
            # (compare as float64: NumPy 2 would narrow v to the format first)
            r, n = float(rounded), float(neighbour)
            crosses = np.frexp(r)[0] in (0.5, -0.5) and abs(v) < abs(r) and abs(n) > abs(r)
            assert 0.5 <= err <= (2.5 if crosses else 1.5)
            # strictly above one half, unless v is a tie between the two, or v is a power of
            # two, whose lower neighbour lies half of ulp(v) away
            if err == 0.5:
                tie = abs(residual_ulps(*_dyadic(v), bits, fmt)) == 0.5
                power_of_two = np.frexp(v)[0] in (0.5, -0.5) and abs(n) < abs(v)
                assert tie or power_of_two


@settings(max_examples=300, deadline=None)
@example(v=Fraction(-1))  # exactly representable and negative: a zero residual, not inward
@given(v=st.fractions(min_value=-10**3, max_value=10**3, max_denominator=10**30)
       | st.builds(lambda m, e: Fraction(m) * Fraction(2) ** e,
                   st.integers(1, 2**80), st.integers(-1200, -1000)))
def test_float64_pair_is_the_exact_error(v):
    """With Exact(rounded, residual) the float64 metric equals the exact rational error."""
    num, den = v.numerator, v.denominator
    shift = 2200  # represent v = num/den to far more bits than any rounding needs
    man, exp = (num << shift) // den, -shift
    bits = round_exact(man, exp, FLOAT64)
    rounded = float(FLOAT64.from_bits(bits))
    exact = Exact([rounded], [residual_ulps(man, exp, bits, FLOAT64)])
    magnitude_exponent = exp + abs(man).bit_length() - 1 if man else FLOAT64.emin
    unit = Fraction(2) ** (max(magnitude_exponent, FLOAT64.emin) - FLOAT64.precision + 1)
    for y in (rounded, float(np.nextafter(rounded, np.inf)), float(np.nextafter(rounded, -np.inf))):
        y_man, y_exp = decode(int(FLOAT64.bits_of(y)), FLOAT64)
        true = abs(Fraction(y_man) * Fraction(2) ** y_exp - Fraction(man) * Fraction(2) ** exp)
        assert ulp_error([y], exact, FLOAT64)[0] == pytest.approx(float(true / unit), abs=1e-12)


@pytest.mark.parametrize("fmt", [FLOAT16, BFLOAT16, FLOAT32, FLOAT64], ids=lambda f: f.name)
def test_ulp_of_the_encoding_equals_the_definition(fmt):
    """Format.ulp_of reads ulp(v) off the float64 encoding; here it meets the definition
    2^(max(floor(log2|v|), emin) - p + 1) computed with frexp and integers, over every
    float64 binade (subnormal float64 values, where the trick needs its other branch, too)."""
    import math

    rng = np.random.default_rng(7)
    v = rng.uniform(0.5, 1, 4196) * np.ldexp(1.0, np.arange(-1074, 1024).repeat(2))
    v = np.concatenate([v[np.isfinite(v)], [0.0, 5e-324, -2.0**-1022, 2.0**fmt.emin]])

    def by_definition(x: float) -> float:
        e = math.frexp(abs(x))[1] - 1 if x else -(1 << 20)
        return math.ldexp(1.0, max(e, fmt.emin) - fmt.precision + 1)

    assert fmt.ulp_of(v).tolist() == [by_definition(float(x)) for x in v]
    assert fmt.ulp_of(np.float64(1.0)).shape == ()


def test_an_exact_reference_holds_float64_whatever_it_is_given():
    e = Exact([1, 2], np.array([0.25, -0.5], dtype=np.float32))
    assert e.rounded.dtype == np.float64 and e.residual.dtype == np.float64
    assert e.residual.tolist() == [0.25, -0.5]
    part = e[1:]
    assert part.rounded.tolist() == [2.0] and part.residual.tolist() == [-0.5]


def test_the_metric_warns_of_nothing_on_infinities_nans_and_huge_values():
    """Overflow and inf - inf are part of the domain (scored inf or 0), not warnings."""
    import warnings

    huge = np.array([1.7e308, np.inf, np.nan, -1.7e308])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ulp_error(huge, Exact(-huge, np.zeros(4)), FLOAT64)
        ulp_error(np.float32([3e38, np.inf]), np.array([-3e38, np.inf]), FLOAT32)
        abs_error(huge, Exact(-huge, np.zeros(4)), FLOAT64)
        abs_error(huge, -huge, FLOAT64)
        abs_error([np.inf], Exact([np.inf], [0.0]), FLOAT32)
        abs_error([np.inf, np.nan], [np.inf, 1.0], FLOAT32)  # inf - inf: right, not a warning


def test_a_difference_past_float64s_range_is_halved_not_infinite():
    """y = 1.7e308 against -1.7e308: y - r overflows float64; the error is 2y / ulp(y),
    ulp(y) = 2^(1023-52), by exact rational arithmetic."""
    y = 1.7e308
    expected = float(2 * Fraction(y) / Fraction(2) ** (1023 - 52))
    got = ulp_error([y], Exact([-y], [0.0]), FLOAT64)[0]
    assert got == expected and np.isfinite(got)


def test_the_float64_refusal_says_why():
    with pytest.raises(TypeError, match=r"^float64 needs an Exact \(rounded, residual\) "
                       r"reference: no float64 array carries more than 53 bits$"):
        ulp_error(np.array([1.0]), np.array([1.0]), FLOAT64)

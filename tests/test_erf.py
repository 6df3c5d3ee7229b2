"""erf and erfc measured like Φ and GELU: a correctly rounded erf/erfc written here, apart from
gelucheck's reference code (mpmath at 160 bits, rounded by the few lines below), scores 0.5 ulp
with no result rounded the wrong way in every format; planted defects are found."""
import math

import mpmath
import numpy as np
import pytest

from gelucheck.backends import Implementation
from gelucheck.checks import accuracy
from gelucheck.formats import FORMATS, get_format
from gelucheck.judge import judge_default
from gelucheck.testing import assert_max_ulp

PREC = 160


def _round_into(value, fmt) -> float:
    """An mpf known to PREC bits, rounded to nearest-even into fmt (subnormals included) -
    written apart from gelucheck.reference.rounding, from the format's p and emin alone."""
    sign, man, exp, bc = value._mpf_
    if not man:
        return 0.0
    top = exp + bc - 1  # the exponent of the leading bit
    quantum = max(top, fmt.emin) - (fmt.precision - 1)
    shift = quantum - exp
    if shift > 0:
        kept, rest, half = man >> shift, man & ((1 << shift) - 1), 1 << (shift - 1)
        if rest > half or (rest == half and kept & 1):
            kept += 1
        man, exp = kept, quantum
    return math.ldexp(-man if sign else man, exp)


def exactly_rounded(mp_fn):
    done = {}  # the planted tests call it on the same float16 inputs: mpmath once

    def fn(x: np.ndarray) -> np.ndarray:
        key = (x.dtype.name, x.shape, x.tobytes())
        if key not in done:
            done[key] = _evaluate(x)
        return done[key].copy()

    def _evaluate(x: np.ndarray) -> np.ndarray:
        fmt = get_format(x.dtype)
        out = []
        with mpmath.mp.workprec(PREC):
            for v in x.astype(np.float64).ravel().tolist():
                if math.isnan(v):
                    out.append(math.nan)
                elif v == 0 and mp_fn is mpmath.erf:
                    out.append(v)  # erf(±0) = ±0
                elif abs(v) > 30:  # erfc(30) < 1e-393: past every format's half quantum;
                    # mpmath's erfc takes minutes out there
                    out.append(math.copysign(1.0, v) if mp_fn is mpmath.erf else
                               (0.0 if v > 0 else 2.0))
                else:
                    out.append(_round_into(mp_fn(mpmath.mpf(v)), fmt))
        return np.array(out, dtype=np.float64).astype(x.dtype).reshape(x.shape)
    fn.__qualname__ = f"exactly_rounded_{mp_fn.__name__}"
    return fn


ERF, ERFC = exactly_rounded(mpmath.erf), exactly_rounded(mpmath.erfc)


def test_the_rounding_here_is_right_by_hand():
    """By hand: erf(1) = 0.84270079...; float16 has 11 bits: 0.8427 * 2^11 = 1725.85 -> 1726
    / 2048 = 0.8427734375. The smallest float16 subnormal is 2^-24; erf(2^-24) = 1.128·2^-24
    rounds to 2^-24."""
    f16 = get_format("float16")
    with mpmath.mp.workprec(PREC):
        assert _round_into(mpmath.erf(1), f16) == 0.8427734375
        assert _round_into(mpmath.erf(mpmath.mpf(2) ** -24), f16) == 2.0 ** -24
        assert _round_into(mpmath.erfc(mpmath.mpf(5)), f16) == 0.0  # 1.5e-12 < 2^-25


@pytest.mark.slow  # every stored input of every format, in mpmath: seconds
@pytest.mark.parametrize("dtype", list(FORMATS))
@pytest.mark.parametrize("function, fn", [("erf", ERF), ("erfc", ERFC)], ids=["erf", "erfc"])
def test_a_correctly_rounded_erf_and_erfc_score_half_an_ulp(function, fn, dtype):
    assert_max_ulp(fn, function, dtype, 0.5)  # also: none rounded the wrong way, specials


def _measured(fn, function, dtype="float16"):
    impl = Implementation("user", fn.__qualname__, function, fn)
    result = accuracy.measure(impl, get_format(dtype))
    return result, judge_default(result)


def _planted(base, change):
    def fn(x):
        y = base(x).copy()
        change(x, y)
        return y
    fn.__qualname__ = f"planted_{change.__name__}"
    return fn


def test_a_result_of_the_wrong_sign_is_found_however_few_ulps():
    def wrong_sign(x, y):  # at the smallest positive subnormal: -2^-24 where 2^-24 is right
        i = np.flatnonzero(x == np.float16(2.0 ** -24))
        y[i] = -y[i]

    result, verdict = _measured(_planted(ERF, wrong_sign), "erf")
    assert result.figures.impossible == 1 and result.figures.impossible_at == 2.0 ** -24
    assert any("of the wrong sign" in line for line in verdict.worse)


def test_an_erf_above_one_is_found():
    def above_one(x, y):  # erf(4) rounds to 1 in float16; one step above it
        i = np.flatnonzero(x == np.float16(4.0))
        y[i] = np.nextafter(np.float16(1), np.float16(2))

    result, verdict = _measured(_planted(ERF, above_one), "erf")
    assert result.figures.impossible == 1 and result.figures.impossible_computed > 1
    assert any("outside [-1, 1]" in line for line in verdict.worse)


def test_an_erfc_flushed_below_the_smallest_normal_is_found():
    def flush(x, y):
        y[np.abs(y.astype(np.float64)) < 2.0 ** -14] = 0

    result, verdict = _measured(_planted(ERFC, flush), "erfc")
    # erfc(x) is subnormal in float16 for 2.97 < x < 3.92: each of those 1-2^10 quanta lost
    assert result.figures.not_correctly_rounded > 100
    assert result.figures.max_ulp > 100 and result.figures.impossible == 0
    assert verdict.worse


def test_the_correctly_rounded_erfc_in_float16_passes_the_default_gate():
    result, verdict = _measured(ERFC, "erfc")
    assert result.figures.max_ulp <= 0.5 and result.figures.not_correctly_rounded == 0
    assert not verdict.worse, verdict.worse

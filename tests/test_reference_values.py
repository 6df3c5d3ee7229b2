"""The reference against numbers from independent sources: the article, hand derivations, Arb."""
import math

import mpmath
import numpy as np
import pytest

from gelucheck.formats import BFLOAT16, FLOAT16, FLOAT32, FLOAT64, FORMATS, narrow
from gelucheck.reference import arbref, mpformulas
from gelucheck.reference.mpref import correctly_rounded, gelu_minimum, gelu_tanh_minimum


@pytest.mark.parametrize("function, x, expected", [
    ("gelu", -1.0, -0.15865525393145705),
    ("gelu", 2.0, 1.9544997361036416),
    ("phi", 1.0, 0.8413447460685429),
    ("phi", 0.0, 0.5),
    ("gelu", 0.0, 0.0),
])
def test_article_values_float64(function, x, expected):
    r = correctly_rounded(function, x, FLOAT64)
    assert float(FLOAT64.from_bits(r.bits)) == expected
    assert abs(r.residual) <= 0.5


@pytest.mark.parametrize("fmt", [FLOAT16, BFLOAT16, FLOAT32])
def test_article_values_round_into_narrow_formats(fmt):
    # The float64 values above are within 2**-53 relative of the truth, far from any
    # narrower rounding boundary, so rounding them with NumPy is an independent expectation.
    for function, x, v in [("gelu", -1.0, -0.15865525393145705), ("gelu", 2.0, 1.9544997361036416),
                           ("phi", 1.0, 0.8413447460685429)]:
        r = correctly_rounded(function, x, fmt)
        assert r.bits == int(fmt.bits_of(narrow(np.array([v]), fmt))[0])
        assert float(FLOAT64.from_bits(r.float64_bits)) == v


def test_minimum_of_gelu():
    x, value = gelu_minimum(digits=30)
    mpmath.mp.dps = 30
    assert abs(x - mpmath.mpf("-0.75179152469356445746")) < mpmath.mpf("1e-20")
    assert abs(value - mpmath.mpf("-0.16997120747990366169")) < mpmath.mpf("1e-20")


def test_minimum_of_tanh_form():
    x, value = gelu_tanh_minimum(digits=30)
    mpmath.mp.dps = 30
    assert abs(x - mpmath.mpf("-0.75246142207")) < mpmath.mpf("1e-11")
    assert abs(value - mpmath.mpf("-0.17004075057")) < mpmath.mpf("1e-11")


def test_derivatives_by_hand():
    with mpmath.mp.workdps(30):
        assert mpformulas.phi_prime(mpmath.mpf(0)) == 1 / mpmath.sqrt(2 * mpmath.pi)
        assert abs(mpformulas.gelu_prime(mpmath.mpf(0)) - mpmath.mpf("0.5")) < mpmath.mpf("1e-29")
        half = mpmath.mpf("0.5")
        assert abs(mpformulas.gelu_tanh_prime(mpmath.mpf(0)) - half) < mpmath.mpf("1e-25")
        # GELU'(x) = Φ(x) + xφ(x) against a numerical derivative of GELU itself
        for x in ("-3.5", "-0.7", "1.25"):
            numeric = mpmath.diff(mpformulas.gelu, mpmath.mpf(x))
            assert abs(mpformulas.gelu_prime(mpmath.mpf(x)) - numeric) < mpmath.mpf("1e-25")


def test_tanh_form_identity():
    """The reference's x/(1+exp(-2u)) equals the published 0.5x(1+tanh(u))."""
    with mpmath.mp.workdps(40):
        for x in ("-3", "-0.75", "0.5", "2.69894"):
            x = mpmath.mpf(x)
            u = mpmath.sqrt(2 / mpmath.pi) * (x + mpmath.mpf("0.044715") * x**3)
            assert abs(mpformulas.gelu_tanh(x) - x / 2 * (1 + mpmath.tanh(u))) < mpmath.mpf("1e-38")


def test_tanh_drift_maximum():
    """docs/design.md: max |GELU - GELU_tanh| = 4.7324e-4 at x = ±2.69894."""
    with mpmath.mp.workdps(30):
        diff = lambda x: mpformulas.gelu(x) - mpformulas.gelu_tanh(x)
        x = mpmath.findroot(lambda t: mpmath.diff(diff, t), mpmath.mpf("2.7"))
        assert abs(x - mpmath.mpf("2.69894")) < 1e-5
        assert abs(abs(diff(x)) - mpmath.mpf("4.7324e-4")) < 1e-8
        # GELU(-x) = GELU(x) - x, and likewise the tanh form: the difference is even
        assert abs(diff(-x) - diff(x)) < mpmath.mpf("1e-28")


@pytest.mark.parametrize("fmt", list(FORMATS.values()))
@pytest.mark.parametrize("function", ["phi", "gelu", "gelu_tanh"])
def test_hard_inputs_agree_with_arb(fmt, function):
    """Underflow, the subnormal range, saturation, both minima: mpmath's rounding is the one
    Arb proves."""
    pytest.importorskip("flint", reason="python-flint (Arb) is not installed")
    xs = [-0.0, 0.0, fmt.smallest_subnormal, -fmt.smallest_subnormal, -0.7517915246935645,
          -0.7524614220710163, -10.5, -14.1, -37.5, -38.5, 5.4, 8.3, 63.99, 64.0, -64.0,
          fmt.max_finite, -fmt.max_finite]
    for x in xs:
        x = float(np.asarray(x, dtype=fmt.dtype))
        assert arbref.certify(function, x, fmt) == correctly_rounded(function, x, fmt).bits, x


def test_saturation_threshold_is_safe():
    """At |x| = 64 the true Φ tail is below 2**-2954 (so closed forms are exact to float64)."""
    with mpmath.mp.workprec(200):
        tail = mpmath.erfc(64 / mpmath.sqrt(2)) / 2
    assert tail < mpmath.mpf(2) ** -2954
    # by hand: Q(64) ≈ φ(64)/64 = exp(-2048) / (64·√(2π)), log2 = -2954.7 - 6 - 1.3 = -2962.0
    assert math.isclose(float(mpmath.log(tail, 2)), -2962.0, abs_tol=0.1)

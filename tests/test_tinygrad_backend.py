"""The tinygrad backend on its CPU device (the accuracy, fingerprints and budgets are the
shipped suite's, in `tox -e tinygrad`): what it computes, checked against values worked out by
hand from the formulas its source states, and its default GELU being the tanh form."""
import math

import numpy as np
import pytest

pytest.importorskip("tinygrad", reason="tinygrad is not installed (extra: tinygrad)")

from gelucheck.backends import get_backend


def _impls():
    backend = get_backend("tinygrad")
    if not backend.available:
        pytest.skip(backend.reason)  # its CPU device needs clang
    return {(i.name, i.function.name): i for i in backend.implementations}


def _as7126(x: float) -> float:
    """Abramowitz and Stegun 7.1.26, the erf tinygrad's source names, in float64."""
    t = 1 / (1 + 0.3275911 * abs(x))
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027
                                                                           + t * 1.061405429))))
    return math.copysign(1 - poly * math.exp(-x * x), x)


def test_its_erf_is_abramowitz_stegun_7_1_26_not_erf():
    x = np.array([0.1, 0.5, 1.0, 2.0, -0.3])
    y = _impls()[("erf", "erf")](x)
    expected = np.array([_as7126(v) for v in x])
    assert np.allclose(y, expected, rtol=0, atol=1e-15)
    # and that form is 1.5e-7 off erf at most (A&S's own bound), far more than float64's ulp
    assert np.max(np.abs(y - np.array([math.erf(v) for v in x]))) > 1e-9


def test_its_default_gelu_is_the_tanh_form():
    impl = _impls()[("gelu", "gelu_tanh")]
    x = np.array([-1.0, 0.5, 2.0])
    tanh_form = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    assert np.allclose(impl(x), tanh_form, rtol=1e-15, atol=0)
    assert "default" in impl.description


def test_bfloat16_is_computed_on_the_device_and_comes_back_exactly():
    import ml_dtypes

    impl = _impls()[("quick_gelu", "gelu")]
    x = np.array([-1.0, 0.5, 2.0], dtype=ml_dtypes.bfloat16)
    y = impl(x)
    assert y.dtype == x.dtype
    assert np.allclose(y.astype(np.float64), x.astype(np.float64) / (1 + np.exp(
        -1.702 * x.astype(np.float64))), rtol=2**-6)


def test_the_derivatives_come_from_its_autograd():
    impl = _impls()[("gelu(none)", "gelu_grad")]
    x = np.array([-1.0, 0.0, 1.0])
    phi = 0.5 * (1 + np.array([_as7126(v / math.sqrt(2)) for v in x]))
    pdf = np.exp(-x * x / 2) / math.sqrt(2 * math.pi)
    assert np.allclose(impl(x), phi + x * pdf, atol=1e-6)

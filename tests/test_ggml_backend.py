"""The ggml backend (ggml-python's bindings, its CPU backend; the accuracy, fingerprints and
budgets are the shipped suite's, in `tox -e ggml`): what it computes, checked against values
worked out from the formulas its source states (ggml-cpu/vec.h)."""
import math

import numpy as np
import pytest

pytest.importorskip("ggml", reason="ggml-python is not installed (extra: ggml)")

from gelucheck.backends import get_backend


def _impls():
    backend = get_backend("ggml")
    if not backend.available:
        pytest.skip(backend.reason)
    return {(i.name, i.function.name): i for i in backend.implementations}


def _tanh_form(x: float) -> float:
    return 0.5 * x * (1 + math.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def test_its_float32_gelu_is_a_float16_table_of_the_tanh_form():
    """x rounded to float16, the tanh form there, the result rounded to float16: values
    away from float16's rounding ties, so float32 or float64 inside gives the same entry."""
    x = np.array([-1.0, 0.5, 2.0, 0.1234567, -3.3], dtype=np.float32)
    y = _impls()[("gelu", "gelu_tanh")](x)
    expected = [np.float16(_tanh_form(float(np.float16(v)))) for v in x]
    assert y.dtype == np.float32
    assert y.tolist() == [float(e) for e in expected]
    assert y[3] != np.float32(_tanh_form(0.1234567))  # far from the float32 result


def test_its_gelu_is_0_from_minus_10_and_x_from_10():
    y = _impls()[("gelu", "gelu_tanh")](np.array([-10.0, -30.0, 10.0, 1e30], np.float32))
    assert y.tolist() == [0.0, 0.0, 10.0, float(np.float32(1e30))]
    assert not np.signbit(y[0])  # +0 where GELU is a negative number


def test_its_quick_gelu_beyond_float16s_range_is_inf_and_nan():
    """float16 has no 70000: the table's entry for -inf is -inf·σ(-inf) = -inf·0, NaN; for
    +inf it is inf - where x·σ(1.702x) is -0 and 70000."""
    y = _impls()[("gelu_quick", "gelu")](np.array([-70000.0, 70000.0], np.float32))
    assert np.isnan(y[0]) and y[1] == np.inf


def test_its_gelu_erf_is_float32_erf_with_no_table():
    x = np.array([-1.0, 0.1234567, 2.5], dtype=np.float32)
    y = _impls()[("gelu_erf", "gelu")](x)
    exact = [0.5 * float(v) * (1 + math.erf(float(v) / math.sqrt(2))) for v in x]
    assert np.allclose(y, exact, rtol=2.0**-21, atol=0)


def test_an_empty_input_does_not_reach_ggml_and_a_shape_is_kept():
    """ggml asserts (and aborts the process) on a tensor of no elements."""
    impl = _impls()[("gelu_erf", "gelu")]
    assert impl(np.zeros(0, np.float32)).shape == (0,)
    x = np.linspace(-2, 2, 6, dtype=np.float32).reshape(2, 3)
    assert impl(x).shape == (2, 3)
    assert impl(np.float32(1.0).reshape(())).shape == ()

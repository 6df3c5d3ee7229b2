"""gelucheck.testing: the assertions a project puts in its own tests."""
import numpy as np
import pytest
from scipy import special

from gelucheck.errors import UsageError
from gelucheck.formats import narrow
from gelucheck.testing import assert_max_ulp, assert_minimum


def gelu_rounded_once(x):
    """x·ndtr(x) in float64, rounded once into x's format."""
    wide = x.astype(np.float64)
    return narrow(wide * special.ndtr(wide), x.dtype.name)


def gelu_off_by_one(x):
    """One ulp up wherever x > 1: a planted error a user could make."""
    y = gelu_rounded_once(x)
    return np.where(x > 1, np.nextafter(y, np.asarray(np.inf, y.dtype)), y).astype(x.dtype)


def test_a_correctly_rounded_gelu_passes_in_float16():
    assert_max_ulp(gelu_rounded_once, "gelu", "float16", 0.5, specials=False)


def test_a_wrong_gelu_fails_naming_the_worst_input():
    with pytest.raises(AssertionError) as info:
        assert_max_ulp(gelu_off_by_one, "gelu", "float16", 0.5, specials=False)
    message = str(info.value)
    # every float16 x with 1 < x <= 65504 is one ulp off (at 65504 the step goes to inf)
    n_above_one = 0x7C00 - 0x3C01
    assert f"not correctly rounded ({n_above_one} of 63488 inputs, e.g. " in message
    assert "ulp off at x = " in message and "0x" in message and "correctly rounded" in message


@pytest.mark.parametrize("max_ulp", [float("nan"), -1.0, True, "1"])
def test_a_limit_that_is_not_a_number_of_ulps_is_refused(max_ulp):
    """NaN compared false with every error: the wrong GELU above passed. Refused before any
    measurement, by both assertions."""
    with pytest.raises(UsageError, match="need a number of ulps, 0 or more"):
        assert_max_ulp(gelu_off_by_one, "gelu", "float16", max_ulp, specials=False)
    with pytest.raises(UsageError, match="need a number of ulps, 0 or more"):
        assert_minimum(gelu_off_by_one, "float16", max_ulp=max_ulp)


def test_a_region_limits_the_claim():
    assert_max_ulp(gelu_off_by_one, "gelu", "float16", 0.5, region="-1<=x<0", specials=False)
    with pytest.raises(AssertionError, match="in 1<=x<5"):
        assert_max_ulp(gelu_off_by_one, "gelu", "float16", 0.5, region="1<=x<5",
                       specials=False)


def test_a_special_input_that_misses_its_limit_fails():
    """x·ndtr(x) at x = -inf is -inf·0 = NaN; the limit is -0."""
    with pytest.raises(AssertionError, match=r"-inf: expected -0.0, computed nan"):
        assert_max_ulp(gelu_rounded_once, "gelu", "float16", 0.5)


def gelu_refusing_infinity(x):
    """Correct on finite inputs; raises on ±inf, as a strict user function may."""
    if np.isinf(x).any():
        raise ValueError("infinite input")
    return gelu_rounded_once(x)


def test_a_function_that_raises_on_the_special_inputs_fails_with_its_error():
    """Not an AttributeError from gelucheck: the assertion says the special inputs raised."""
    with pytest.raises(AssertionError, match=r"special inputs: .*infinite input"):
        assert_max_ulp(gelu_refusing_infinity, "gelu", "float16", 0.5)


def test_a_torch_callable(monkeypatch, request):
    """Tensors in and out; the errors known by construction (user_impls), not torch's
    kernels', which differ by kernel tier."""
    pytest.importorskip("torch", reason="torch is not installed")
    monkeypatch.syspath_prepend(str(request.config.rootpath / "tests"))
    from user_impls import torch_gelu_one_ulp_up_in_band

    assert_max_ulp(torch_gelu_one_ulp_up_in_band, "gelu", "float16", 1.5,
                   framework="torch", specials=False)
    with pytest.raises(AssertionError, match="exceed 1 ulp"):
        assert_max_ulp(torch_gelu_one_ulp_up_in_band, "gelu", "float16", 1.0,
                       framework="torch", specials=False)


def test_assert_minimum():
    found = assert_minimum(gelu_rounded_once, "float32")
    assert found.plateau_lo <= -0.7517915 <= found.plateau_hi
    with pytest.raises(AssertionError, match="not on the plateau"):
        assert_minimum(lambda x: gelu_rounded_once(x + np.asarray(0.01, x.dtype)), "float32")


def test_a_tie_rounded_the_wrong_way_is_said_so():
    """GELU at a subnormal x is x/2 less a hair: x·ndtr(x) in float64 lands on the tie x/2,
    and narrowing it rounds to even - the wrong way at half of them, each 0.5 ulp."""
    with pytest.raises(AssertionError, match=r"a tie rounded the wrong way .* at x = "):
        assert_max_ulp(gelu_rounded_once, "gelu", "bfloat16", 0.5, specials=False)


@pytest.mark.slow  # pytest in a process of its own: seconds
def test_the_users_test_is_what_pytest_shows(pytester):
    """A failing assert_max_ulp in a user's test shows the user's line, not gelucheck's."""
    pytester.makepyfile('''
import numpy as np
from gelucheck.testing import assert_max_ulp

def off(x):
    return (x.astype(np.float64) * 0.6).astype(x.dtype)

def test_mine():
    assert_max_ulp(off, "gelu", "float16", 1, specials=False)
''')
    result = pytester.runpytest_subprocess("-q")
    out = result.stdout.str()
    assert result.ret == 1 and "assert_max_ulp(off" in out
    assert "raise AssertionError" not in out and "gelucheck/testing.py" not in out

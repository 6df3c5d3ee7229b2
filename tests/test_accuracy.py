"""The accuracy matrix (gelucheck.suite, shipped with the package and run here over every
installed backend), and checks of the figures it reports against independent sources."""

import numpy as np
import pytest

from gelucheck import measurement
from gelucheck.checks import accuracy, reference_data
from gelucheck.formats import FORMATS
from gelucheck.functions import GELU
from gelucheck.results import AccuracyResult, DriftResult
from gelucheck.suite.test_matrix import (  # noqa: F401 - collected here too
    test_consistent,
    test_fingerprint,
    test_minimum,
    test_sign,
    test_specials,
    test_tanh_drift,
    test_ulp,
)


@pytest.mark.parametrize("dtype", [FORMATS[n] for n in ("float16", "float32", "float64")],
                         ids=str)
def test_reference_drift_is_the_published_maximum(dtype):
    """docs/design.md: max |GELU - GELU_tanh| = 4.7324e-4 at x = ±2.69894, from the stored exact
    values (the samples come within 1e-7 of the maximum; the curve is flat there)."""
    tab = reference_data.table(dtype, "gelu")
    d = np.abs(tab.exact("gelu") - tab.exact("gelu_tanh"))
    i = int(np.argmax(d))
    assert d[i] == pytest.approx(4.7324e-4, abs=2e-7)
    assert abs(abs(float(tab.x[i])) - 2.69894) < 0.02


def test_quick_gelu_drift_matches_mpmath():
    """The largest |x·σ(1.702x) - GELU(x)|, found by mpmath, is what the float64 sample shows."""
    import mpmath

    from gelucheck.backends import find
    from gelucheck.reference import mpformulas

    with mpmath.mp.workdps(30):
        f = lambda t: t / (1 + mpmath.exp(-mpmath.mpf("1.702") * t)) - mpformulas.gelu(t)
        peaks = [mpmath.findroot(lambda t: mpmath.diff(f, t), mpmath.mpf(s)) for s in (-2.3, 2.3)]
        worst = max(abs(f(p)) for p in peaks)
    quick = find("variants:quick_gelu")[0]
    float64 = FORMATS["float64"]
    result = accuracy.measure(quick, float64)
    tab = reference_data.table(float64, "gelu")
    got = np.max(np.abs(quick(tab.x) - tab.exact(GELU)))
    assert got <= float(worst) * (1 + 1e-9)
    assert got == pytest.approx(float(worst), rel=1e-3)  # the dense sample nearly hits the peak
    assert result.figures.max_abs_error == pytest.approx(got)


def test_matrix_includes_drift_and_reference_rows():
    from gelucheck.backends import find

    impls = find("torch:F.gelu") if _has_torch() else find("numpy:tanh")
    results = measurement.run(impls, [FORMATS["float16"]], progress=False)
    assert {type(r) for r in results} == {AccuracyResult, DriftResult}
    assert any(isinstance(r, DriftResult) and r.mathematical for r in results)


def _has_torch():
    from gelucheck.backends import get_backend

    return get_backend("torch").available


def test_the_mean_error_of_an_approximation_near_the_top_of_float64_is_a_number():
    """quick_gelu's float64 errors reach 1e297 ulps and more: their plain sum overflowed and
    the report's mean was inf (with a RuntimeWarning). (1e308 + 1e308 + 0) / 3, by hand."""
    errors = np.array([1e308, 1e308, 0.0, np.inf])  # inf: counted apart, not in the mean
    assert accuracy._mean(errors) == pytest.approx(1e308 / 3 * 2, rel=1e-15)
    assert accuracy._mean(np.array([1.0, 2.0])) == 1.5

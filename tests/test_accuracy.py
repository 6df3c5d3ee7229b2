"""The backends against the reference: ulp error per region, special inputs and the negative
minimum against tests/budgets.toml; tanh drift against mathematics. Parametrized by the
gelucheck plugin over --backend/--dtype/--function."""
import warnings

import numpy as np
import pytest

from gelucheck import budgets, matrix
from gelucheck.checks import accuracy, data, drift, minimum, specials
from gelucheck.formats import FORMATS
from gelucheck.functions import GELU
from gelucheck.pytest_plugin import only_functions
from gelucheck.results import AccuracyResult, DriftResult, Identity, MinimumFinding


def _judge(result, gelucheck_budgets, record_gelucheck):
    verdict = budgets.judge(result, gelucheck_budgets)
    if verdict.missing:
        record_gelucheck(result)
        pytest.skip(f"{result.label}: measured, but no budget is recorded for it yet; record "
                    "one with `gelucheck budgets --write tests/budgets.toml` (or your own "
                    "file, passed with --budgets)")
    note = verdict.message() if verdict.better and not verdict.failed else None
    record_gelucheck(result, note)
    if note:
        warnings.warn(note, stacklevel=2)
    assert not verdict.failed, verdict.message()


def test_ulp(accuracy_case, gelucheck_budgets, record_gelucheck):
    impl, dtype = accuracy_case
    result = accuracy.measure(impl, dtype)
    assert result.failure is None, result.failure.reason
    _judge(result, gelucheck_budgets, record_gelucheck)


def test_specials(accuracy_case, gelucheck_budgets, record_gelucheck):
    impl, dtype = accuracy_case
    result = AccuracyResult(Identity.of(impl, dtype), impl.reference_function.name,
                            impl.how(dtype), impl.description,
                            specials=specials.check(impl, dtype))
    _judge(result, gelucheck_budgets, record_gelucheck)


@only_functions("gelu", "gelu_tanh")
def test_minimum(accuracy_case, gelucheck_budgets, record_gelucheck):
    impl, dtype = accuracy_case
    found = minimum.check(impl, dtype)
    assert isinstance(found, MinimumFinding), found
    # the smallest output is within the window and the window brackets x*
    assert found.window[0] < found.x_star < found.window[1]
    assert found.plateau_lo <= found.plateau_hi
    result = AccuracyResult(Identity.of(impl, dtype), impl.reference_function.name,
                            impl.how(dtype), impl.description, minimum=found)
    _judge(result, gelucheck_budgets, record_gelucheck)


def test_tanh_drift(drift_case):
    """The drift a backend shows stays within its two implementations' own errors of the
    mathematical drift: | max|a-b| - max|A-B| | <= max|a-A| + max|b-B| on the same inputs."""
    exact_impl, tanh_impl, dtype = drift_case
    tab = data.table(dtype)
    x = tab.x
    a = exact_impl(x).astype(np.float64) if exact_impl else tab.rounded(GELU).astype(np.float64)
    b = tanh_impl(x).astype(np.float64)
    A, B = tab.exact(GELU), tab.exact(tanh_impl.reference_function)
    finite = np.isfinite(a) & np.isfinite(b)
    measured = np.max(np.abs(a - b)[finite])
    truth = np.max(np.abs(A - B)[finite])
    slack = np.max(np.abs(a - A)[finite]) + np.max(np.abs(b - B)[finite])
    assert abs(measured - truth) <= slack * (1 + 1e-12) + 1e-300
    result = drift.backend_drift(exact_impl, tanh_impl, dtype)
    assert result.figures.max_abs == pytest.approx(measured, rel=1e-12)
    assert 0 <= result.figures.differ_fraction <= 1


@pytest.mark.parametrize("dtype", [FORMATS[n] for n in ("float16", "float32", "float64")],
                         ids=str)
def test_reference_drift_is_the_published_maximum(dtype):
    """docs/design.md: max |GELU - GELU_tanh| = 4.7324e-4 at x = ±2.69894, from the stored exact
    values (the samples come within 1e-7 of the maximum; the curve is flat there)."""
    tab = data.table(dtype)
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
    tab = data.table(float64)
    got = np.max(np.abs(quick(tab.x) - tab.exact(GELU)))
    assert got <= float(worst) * (1 + 1e-9)
    assert got == pytest.approx(float(worst), rel=1e-3)  # the dense sample nearly hits the peak
    assert result.figures.max_abs_error == pytest.approx(got)


def test_matrix_includes_drift_and_reference_rows():
    from gelucheck.backends import find

    impls = find("torch:F.gelu") if _has_torch() else find("numpy:tanh")
    results = matrix.run(impls, [FORMATS["float16"]], progress=False)
    assert {type(r) for r in results} == {AccuracyResult, DriftResult}
    assert any(isinstance(r, DriftResult) and r.mathematical for r in results)


def _has_torch():
    from gelucheck.backends import get_backend

    return get_backend("torch").available

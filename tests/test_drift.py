"""The drift check's parts (gelucheck.checks.drift): how two outputs differ, which pairs are
measured, and where each puts GELU's minimum. Expected figures are derived by hand or by
mpmath here, not read from the module."""
import warnings

import mpmath
import numpy as np
import pytest

from gelucheck.backends import Implementation, find
from gelucheck.checks import drift, reference_data
from gelucheck.formats import FLOAT16, FLOAT32, FLOAT64
from gelucheck.functions import GELU, GELU_TANH, PHI
from gelucheck.results import Failure, MinimumFinding

FORMS_GAP = 4.7324e-4  # mpmath: max over x of |GELU(x) - tanh form(x)| (docs/design.md)


def _f16(*v):
    return np.array(v, dtype=np.float16)


# --- compare_outputs ----------------------------------------------------------------------

def test_the_largest_absolute_and_ulp_differences_are_found_apart():
    """At x = 4 the outputs differ by 2^-8 (ulps of 4 are 2^-8: 1 ulp); at x = 1 by 2^-10
    (ulps of 1 are 2^-10: 1 ulp) and at x = 0.5 by 2^-10 (ulps of 0.5 are 2^-11: 2 ulps)."""
    x = _f16(0.5, 1.0, 2.0, 4.0)
    first = _f16(0.5, 1.0, 2.0, 4.0)
    second = _f16(0.5 + 2**-10, 1.0 + 2**-10, 2.0, 4.0 + 2**-8)
    f = drift.compare_outputs(x, first, second, FLOAT16, reference=first)
    assert f.n_inputs == 4 and f.differ_fraction == 0.75 and f.nonfinite_differ == 0
    assert (f.max_ulp, f.at_ulp, f.at_ulp_hex) == (2.0, 0.5, "0x3800")
    assert (f.max_abs, f.at, f.at_hex) == (2**-8, 4.0, "0x4400")


def test_equal_outputs_differ_nowhere_and_by_nothing():
    x = _f16(-1.0, 0.0, 3.0)
    f = drift.compare_outputs(x, x, x.copy(), FLOAT16, reference=x)
    assert (f.differ_fraction, f.max_ulp, f.max_abs, f.nonfinite_differ) == (0.0, 0.0, 0.0, 0)


def test_non_finite_outputs_are_counted_apart_and_never_as_a_difference_in_ulps():
    """An overflow against a finite value and a NaN against a finite value differ; inf
    against inf and NaN against NaN do not. None of them enter the ulp figures."""
    x = _f16(1.0, 2.0, 3.0, 4.0, 5.0)
    first = _f16(np.inf, np.nan, np.inf, np.nan, 5.0)
    second = _f16(1.0, 2.0, np.inf, np.nan, 5.0 + 2**-8)
    f = drift.compare_outputs(x, first, second, FLOAT16, reference=x)
    assert f.nonfinite_differ == 2
    assert f.differ_fraction == 3 / 5  # the two non-finite ones and x = 5
    assert (f.max_ulp, f.at_ulp) == (2**-8 / 2**-8, 5.0)  # ulps of 5 are 2^-8
    assert (f.max_abs, f.at) == (2**-8, 5.0)


def test_overflowing_and_infinite_differences_raise_no_warning():
    """float64 outputs of opposite signs near the largest value differ by more than the
    largest value (inf - inf, where both overflow, is not even a number): no warning leaks
    to the caller, and the figures stay those of the finite outputs."""
    big = np.finfo(np.float64).max
    x = np.array([1.0, 2.0, 3.0])
    first, second = np.array([big, np.inf, 1.0]), np.array([-big, np.inf, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f = drift.compare_outputs(x, first, second, FLOAT64, reference=first)
    assert f.max_abs == np.inf and f.at == 1.0 and f.nonfinite_differ == 0


def test_differences_are_in_ulps_of_the_reference_not_of_either_output():
    x = np.array([3.0], np.float32)
    f = drift.compare_outputs(x, np.array([0.0], np.float32), np.array([2**-20], np.float32),
                              FLOAT32, reference=np.array([1.0], np.float32))
    assert f.max_ulp == 2**-20 / 2**-23 == 8.0


# --- reference_drift ----------------------------------------------------------------------

def _tanh_form_minimum():
    with mpmath.mp.workdps(30):
        c = mpmath.sqrt(2 / mpmath.pi)
        g = lambda t: t / 2 * (1 + mpmath.tanh(c * (t + mpmath.mpf("0.044715") * t**3)))
        return mpmath.findroot(lambda t: mpmath.diff(g, t), mpmath.mpf("-0.75"))


def test_the_reference_drift_is_the_forms_gap_and_the_shift_of_the_minimum():
    r = drift.reference_drift(FLOAT32)
    assert (r.backend, r.exact_implementation, r.tanh_implementation, r.dtype) == (
        "reference", "gelu", "gelu_tanh", "float32")
    assert FORMS_GAP - 3e-6 < r.figures.max_abs <= FORMS_GAP + 1e-6
    assert abs(abs(r.figures.at) - 2.699) < 0.02
    x_star = mpmath.mpf("-0.75179152469356445746")
    assert r.minimum_shift == pytest.approx(float(_tanh_form_minimum() - x_star), rel=1e-6)
    assert r.minimum_shift != 0


# --- backend_drift and runtime_drift ------------------------------------------------------

def _stored(function, name="stub", backend="stub", fail=False):
    """An implementation returning the correctly rounded values of the stored float16 inputs."""
    tab = reference_data.table(FLOAT16, GELU)
    rounded = tab.rounded(function)

    def kernel(x):
        if fail:
            raise RuntimeError("boom")
        assert np.array_equal(x, tab.x)
        return rounded.copy()

    return Implementation(backend, name, function.name, kernel, native=("float16",))


def _finding(lo, hi, value):
    return MinimumFinding(-0.75, -0.75, lo, hi, 1, True, 1, [lo, hi], value, value, True, 0.0)


def test_a_correctly_rounded_pair_drifts_as_the_reference_does():
    exact, tanh = _stored(GELU, "exact"), _stored(GELU_TANH, "tanh")
    minima = {(exact.id, "gelu", FLOAT16): _finding(-0.76, -0.74, -0.17),
              (tanh.id, "gelu_tanh", FLOAT16): _finding(-0.75, -0.73, -0.16)}
    r = drift.backend_drift(exact, tanh, FLOAT16, minima)
    assert r.figures == drift.reference_drift(FLOAT16).figures
    assert (r.backend, r.exact_implementation, r.tanh_implementation, r.dtype, r.device) == (
        "stub", "exact", "stub:tanh", "float16", "cpu")
    assert r.minimum_shift == pytest.approx(0.01)  # centres -0.74 and -0.75
    assert r.minimum_value_shift == pytest.approx(0.01)
    assert r.failure is None and r.pair == "tanh"


def test_without_an_exact_gelu_the_correctly_rounded_one_and_the_true_minimum_stand_in():
    tanh = _stored(GELU_TANH, "tanh")
    minima = {(tanh.id, "gelu_tanh", FLOAT16): _finding(-0.75, -0.75, -0.16)}
    r = drift.backend_drift(None, tanh, FLOAT16, minima)
    assert (r.backend, r.exact_implementation) == ("reference", "gelu")
    assert r.figures == drift.reference_drift(FLOAT16).figures
    assert r.minimum_shift == pytest.approx(-0.75 + 0.75179152469356445746, abs=1e-15)
    assert r.minimum_value_shift == pytest.approx(-0.16 + 0.16997120747990366169, abs=1e-15)


def test_the_backend_s_own_exact_output_is_compared_not_the_reference():
    """An 'exact' GELU that computes the tanh form does not drift from the tanh form."""
    r = drift.backend_drift(_stored(GELU_TANH, "exact"), _stored(GELU_TANH, "tanh"), FLOAT16,
                            {})
    assert (r.figures.max_abs, r.figures.differ_fraction) == (0.0, 0.0)


def test_a_minimum_that_could_not_be_found_leaves_the_shifts_unmeasured():
    exact, tanh = _stored(GELU, "exact"), _stored(GELU_TANH, "tanh")
    minima = {(exact.id, "gelu", FLOAT16): Failure("no plateau"),
              (tanh.id, "gelu_tanh", FLOAT16): _finding(-0.75, -0.75, -0.16)}
    r = drift.backend_drift(exact, tanh, FLOAT16, minima)
    assert r.figures is not None
    assert r.minimum_shift is None and r.minimum_value_shift is None


def test_a_failing_implementation_is_a_failure_not_a_figure():
    r = drift.backend_drift(_stored(GELU, "exact"), _stored(GELU_TANH, "tanh", fail=True),
                            FLOAT16, {})
    assert r.figures is None and r.minimum_shift is None
    assert r.failure.reason == "stub:tanh raised RuntimeError: boom"


def test_without_stored_minima_each_is_measured():
    """scipy's exact GELU against numpy's tanh form, both computed in float64 and rounded
    once: their minima lie on plateaus around x* and the tanh form's x*."""
    (exact,) = find("scipy:x*ndtr", GELU)
    (tanh,) = find("numpy:tanh", GELU_TANH)
    r = drift.backend_drift(exact, tanh, FLOAT32)
    expected = float(_tanh_form_minimum() - mpmath.mpf("-0.75179152469356445746"))
    # float32 plateaus of a minimum span about 2^-12 around it
    assert r.minimum_shift == pytest.approx(expected, abs=2**-11)


def test_a_runtime_pair_is_labelled_with_both_functions():
    first, second = _stored(GELU, "exact"), _stored(GELU, "again", backend="other")
    r = drift.runtime_drift(first, second, FLOAT16)
    assert (r.backend, r.pair) == ("stub", "runtimes")
    assert r.exact_implementation == "exact@gelu"
    assert r.tanh_implementation == "other:again@gelu"
    assert (r.figures.max_ulp, r.figures.differ_fraction) == (0.0, 0.0)


def test_a_runtime_pair_of_phi_is_in_ulps_of_phi_and_has_no_minimum():
    """Two Φ one ulp apart at x = 3: Φ(3) = 0.99865 has ulps of 2^-11 in float16, where
    GELU(3) = 2.996 has ulps of 2^-9 (the difference would read 0.25 in those)."""
    tab = reference_data.table(FLOAT16, GELU)
    (i,) = np.flatnonzero(tab.x == 3.0)
    bumped = tab.rounded(PHI).copy()
    bumped[i] = np.nextafter(bumped[i], np.float16(0))
    second = Implementation("other", "phi", "phi", lambda x: bumped.copy(),
                            native=("float16",))
    r = drift.runtime_drift(_stored(PHI, "phi"), second, FLOAT16)
    assert (r.figures.max_ulp, r.figures.at_ulp) == (1.0, 3.0)
    assert r.figures.differ_fraction == 1 / len(tab.x)
    assert r.minimum_shift is None and r.minimum_value_shift is None


# --- pairs --------------------------------------------------------------------------------

def _named(backend, name, function, approximates=None):
    return Implementation(backend, name, function, lambda x: x, approximates=approximates)


def test_pairs_take_the_twin_then_the_backend_s_first_exact_then_none():
    a_exact, a_other = _named("a", "gelu", "gelu"), _named("a", "other", "gelu")
    a_tanh = _named("a", "gelu", "gelu_tanh")  # twin: a:gelu
    a_lone = _named("a", "fast", "gelu_tanh")  # no twin: a's first exact GELU
    b_tanh = _named("b", "gelu", "gelu_tanh")  # b has no exact GELU: the reference
    quick = _named("a", "quick", "gelu", approximates="gelu")  # a stand-in
    phi = _named("a", "phi", PHI.name)  # neither: left out
    got = drift.pairs([a_other, a_exact, a_tanh, a_lone, b_tanh, quick, phi])
    assert [(e.id if e else None, t.id) for e, t in got] == [
        ("a:gelu", "a:gelu"), ("a:other", "a:fast"), (None, "b:gelu"), ("a:other", "a:quick")]
    assert all(t.function.name != "phi" for _, t in got)


def test_a_stand_in_is_not_an_exact_partner():
    quick = _named("a", "quick", "gelu", approximates="gelu")
    tanh = _named("a", "t", "gelu_tanh")
    assert [(e, t.id) for e, t in drift.pairs([quick, tanh])] == [(None, "a:quick"),
                                                                  (None, "a:t")]

"""The float64 search's fast reference (search/expansion.py, reference.py, score.py): every
value within its proven bound of mpmath's, at 300 bits; the compiled and NumPy evaluations
the same bits; its error figures those of the reference of record (mpref + ulp.py)."""
import math

import mpmath
import numpy as np
import pytest

from gelucheck.formats import FLOAT64
from gelucheck.functions import FUNCTIONS, get_function
from gelucheck.reference.mpref import correctly_rounded
from gelucheck.search import reference as search_reference
from gelucheck.search.reference import Reference
from gelucheck.search.score import ulps
from gelucheck.ulp import Exact, ulp_error

# dense runs (expansions), scattered points, and the awkward places: subnormal inputs, values
# leaving the normal range (erfc near 26.5, Φ near -37.5), values just below 1 and 2
AWKWARD = [2.0**-1074 * 7, -(2.0**-1030), 1e-20, -0.75, 0.5, 1.0, 26.5, 26.55, 27.2,
           -37.55, -38.4, 5.95, -5.9, 8.3, 40.0, -2.0**-1022, 63.9]


def _inputs(seed):
    rng = np.random.default_rng(seed)
    dense = np.sort(1.2 + rng.random(12) * 2.0**-30)
    scattered = rng.standard_normal(12) * 6
    return np.concatenate([dense, scattered, AWKWARD])


def _exact(function, x):
    with mpmath.workprec(320):
        return function.mp(mpmath.mpf(float(x)))


def _assert_within_bounds(function, x, values):
    for i, xi in enumerate(x):
        exact = _exact(function, xi)
        with mpmath.workprec(320):
            unit = mpmath.ldexp(1, int(values.scale[i]))
            approx = (mpmath.mpf(float(values.hi[i])) + mpmath.mpf(float(values.lo[i]))) * unit
            bound = mpmath.mpf(float(values.bound[i])) * unit
            if abs(xi) >= search_reference.SATURATION:  # the limit, to far below any ulp
                bound = abs(exact) * mpmath.ldexp(1, -200) + mpmath.ldexp(1, -2000)
            assert abs(approx - exact) <= bound, (function.name, float(xi).hex())


@pytest.mark.parametrize("name", FUNCTIONS)  # every row: a new one needs a series formula
def test_expansions_are_within_their_proven_bound_of_mpmath(name):
    function = get_function(name)
    x = _inputs(1)
    _assert_within_bounds(function, x, Reference(function).values(x))


@pytest.mark.parametrize("name", ["erfc", "gelu"])
def test_values_from_arb_at_each_point_are_within_their_bound_of_mpmath(name):
    function = get_function(name)
    x = _inputs(2)
    _assert_within_bounds(function, x, Reference(function).at_points(x))


def test_an_inputs_value_does_not_depend_on_the_inputs_beside_it():
    """The segment an input gets is a function of the input alone (the same bits in any task,
    on any worker, in any order)."""
    function = get_function("erfc")
    x = _inputs(3)
    together = Reference(function).values(x)
    fresh = Reference(function)
    alone = [fresh.values(x[i:i + 1]) for i in range(0, x.shape[0], 7)]
    for k, values in enumerate(alone):
        assert values.hi[0] == together.hi[7 * k] and values.lo[0] == together.lo[7 * k]


def test_the_compiled_and_numpy_evaluations_give_the_same_bits(monkeypatch):
    pytest.importorskip("numba", reason="the compiled evaluation needs numba (the fast extra)")
    function = get_function("gelu")
    x = np.sort(_inputs(4))
    compiled = Reference(function).values(x)
    monkeypatch.setattr(search_reference, "compiled_kernels", lambda: None)
    plain = Reference(function).values(x)
    assert np.array_equal(compiled.hi, plain.hi) and np.array_equal(compiled.lo, plain.lo)


@pytest.mark.parametrize(("name", "library"), [("erf", math.erf), ("erfc", math.erfc)])
def test_error_figures_are_those_of_the_reference_of_record(name, library):
    """|y - v|/ulp(v) from the fast reference against ulp.py's with mpmath's correctly rounded
    value and residual, within the reference's doubt - also off by one and two ulps, and
    where v lies just below a power of two (erf far right: ulp is the lower binade's)."""
    function = get_function(name)
    x = np.concatenate([_inputs(5), [26.8, 27.9, -6.5]])
    y = np.array([library(v) for v in x])
    y[::3] = np.nextafter(y[::3], np.inf)
    y[1::5] = np.nextafter(np.nextafter(y[1::5], -np.inf), -np.inf)
    error, doubt = ulps(y, Reference(function).values(x))
    rounded = [correctly_rounded(function, float(v), FLOAT64) for v in x]
    exact = Exact(np.array([float(FLOAT64.from_bits(r.bits)) for r in rounded]),
                  np.array([r.residual for r in rounded]))
    truth = ulp_error(y, exact, FLOAT64)
    assert np.all(np.abs(error - truth) <= doubt + 2.0**-40)
    assert np.all(doubt <= 2.0**-13)
    assert truth.max() >= 2  # the test's own perturbations are seen


def test_a_wrong_infinite_or_nan_output_is_infinitely_wrong():
    function = get_function("erf")
    x = np.array([0.5, 0.5, 3.0])
    error, _ = ulps(np.array([np.inf, np.nan, 1.0]), Reference(function).values(x))
    assert np.isinf(error[0]) and np.isinf(error[1]) and np.isfinite(error[2])

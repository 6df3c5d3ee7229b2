"""The figures of checks.accuracy and checks.specials on planted implementations whose errors
are known by construction, against expected values from mpmath and exact arithmetic - never
from gelucheck's own metric. Over every finite float16 input (the stored table)."""
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from gelucheck.backends import Implementation, ImplementationError
from gelucheck.checks import accuracy, reference_data, specials
from gelucheck.formats import FLOAT16

X0 = 1.5  # where the planted errors sit: region 1<=x<5
TAIL = -6.0  # region x<-5


def _gelu_mp(x: float) -> mpmath.mpf:
    with mpmath.workdps(50):
        return mpmath.mpf(x) * mpmath.ncdf(mpmath.mpf(x))


def _ulps_from_mpmath(y: float, x: float) -> float:
    """|y - GELU(x)| in float16 ulps of GELU(x), by mpmath and powers of two."""
    with mpmath.workdps(50):
        v = _gelu_mp(x)
        e = max(int(mpmath.floor(mpmath.log(abs(v), 2))), -14)
        return float(abs(mpmath.mpf(y) - v) / mpmath.mpf(2) ** (e - 10))


def _planted(changes: dict[float, float] | None = None, name: str = "planted", **options):
    """Correctly rounded GELU (the stored rounded values, looked up by input), but the value
    given in ``changes`` at each of its inputs."""
    tab = reference_data.table(FLOAT16, "gelu")
    rounded = tab.rounded("gelu")
    index = {float(v): i for i, v in enumerate(tab.x)}

    def kernel(x):
        y = np.array([rounded[index[float(v)]] if float(v) in index else np.nan for v in x],
                     dtype=np.float16)
        for at, value in (changes or {}).items():
            y[x == np.float16(at)] = np.float16(value)
        return y

    return Implementation("test", name, "gelu", kernel, **{"native": ("float16",), **options})


def _next_up(v: float, steps: int = 1) -> float:
    y = np.float16(v)
    for _ in range(steps):
        y = np.nextafter(y, np.float16(np.inf))
    return float(y)


@pytest.fixture(scope="module")
def exact_at_x0():
    return float(np.float16(_gelu_mp(X0)))


def test_a_correctly_rounded_implementation_scores_at_most_half_an_ulp():
    f = accuracy.measure(_planted(), FLOAT16).figures
    n = len(reference_data.table(FLOAT16, "gelu"))
    assert f.n_inputs == n and n == 63488  # every finite float16: 2 * (2^15 - 2^10)
    assert f.not_correctly_rounded == 0 and f.n_infinite == 0
    assert 0.25 < f.max_ulp <= 0.5 and 0 < f.mean_ulp < 0.5
    assert sum(r.n for r in f.regions) == n
    assert [r.name for r in f.regions] == ["x<-5", "-5<=x<-1", "-1<=x<0", "0<=x<1", "1<=x<5",
                                          "x>=5"]
    assert all(r.not_correctly_rounded == 0 and r.max_ulp <= 0.5 for r in f.regions)


def test_one_wrong_input_is_the_worst_and_its_figure_is_mpmaths(exact_at_x0):
    """Three ulps up at x = 1.5: 2.6 ulps of 2^-10, an absolute error larger than a
    correctly rounded value's anywhere (at most half of 2^-9 up to GELU = 4)."""
    wrong = _next_up(exact_at_x0, 3)
    result = accuracy.measure(_planted({X0: wrong}), FLOAT16)
    f = result.figures
    expected = _ulps_from_mpmath(wrong, X0)
    assert 2.5 < expected < 3.5
    assert f.max_ulp == pytest.approx(expected, rel=1e-9)
    assert f.worst_input == X0 and f.worst_input_hex == "0x3e00"
    assert f.computed == wrong and f.exact == pytest.approx(float(_gelu_mp(X0)), rel=1e-15)
    assert f.not_correctly_rounded == 1 and f.n_infinite == 0
    by = {r.name: r for r in f.regions}
    assert by["1<=x<5"].not_correctly_rounded == 1 and by["1<=x<5"].worst_input == X0
    assert by["1<=x<5"].max_ulp == pytest.approx(expected, rel=1e-9)
    assert sum(r.not_correctly_rounded for r in f.regions) == 1
    assert all(r.max_ulp <= 0.5 for r in f.regions if r.name != "1<=x<5")
    # the absolute error: the planted one is the largest
    assert f.max_abs_at == X0
    assert f.max_abs_error == pytest.approx(float(abs(mpmath.mpf(wrong) - _gelu_mp(X0))),
                                            rel=1e-9)


def test_the_mean_is_over_every_input_and_moves_by_the_planted_error(exact_at_x0):
    clean = accuracy.measure(_planted(), FLOAT16).figures
    wrong = _next_up(exact_at_x0)
    f = accuracy.measure(_planted({X0: wrong}), FLOAT16).figures
    before = _ulps_from_mpmath(exact_at_x0, X0)
    after = _ulps_from_mpmath(wrong, X0)
    assert f.mean_ulp - clean.mean_ulp == pytest.approx((after - before) / f.n_inputs,
                                                        rel=1e-6)


def test_a_nan_is_an_infinite_error_counted_apart_from_the_mean():
    clean = accuracy.measure(_planted(), FLOAT16).figures
    f = accuracy.measure(_planted({TAIL: math.nan}), FLOAT16).figures
    assert f.max_ulp == math.inf and f.n_infinite == 1 and f.worst_input == TAIL
    assert f.not_correctly_rounded == 1
    by = {r.name: r for r in f.regions}
    assert by["x<-5"].max_ulp == math.inf and by["x<-5"].worst_input == TAIL
    assert math.isfinite(by["x<-5"].mean_ulp)
    # the mean of the finite errors: one fewer term, none of them changed
    n = f.n_inputs
    tab = reference_data.table(FLOAT16, "gelu")
    i = int(np.flatnonzero(tab.x == np.float16(TAIL))[0])
    err_at_tail = _ulps_from_mpmath(float(tab.rounded("gelu")[i]), TAIL)
    assert f.mean_ulp == pytest.approx((clean.mean_ulp * n - err_at_tail) / (n - 1), rel=1e-9)


def test_an_error_of_zero_ulps_at_two_inputs_picks_no_worse_one():
    """argmax picks the first of equal errors: the worst input of a correctly rounded result
    is one whose error really is the largest."""
    f = accuracy.measure(_planted(), FLOAT16).figures
    assert _ulps_from_mpmath(f.computed, f.worst_input) == pytest.approx(f.max_ulp, rel=1e-9)


def test_results_the_function_cannot_have_are_counted_and_the_first_named():
    """GELU has the sign of x: a positive GELU(-1) or GELU(-3) is impossible however close
    to 0; the first stored of them is named with its encoding and its output."""
    planted = {-1.0: 0.25, -3.0: 0.5}
    f = accuracy.measure(_planted(planted), FLOAT16).figures
    order = [float(v) for v in reference_data.table(FLOAT16, "gelu").x]
    first = min(planted, key=order.index)
    assert (f.impossible, f.impossible_at, f.impossible_computed) == (2, first, planted[first])
    assert f.impossible_at_hex == FLOAT16.hex(np.float16(first))
    assert accuracy.measure(_planted(), FLOAT16).figures.impossible == 0


def test_all_nan_is_said_and_a_raise_is_a_failure():
    tab = reference_data.table(FLOAT16, "gelu")
    nan = Implementation("test", "nan", "gelu", lambda x: np.full_like(x, np.nan),
                         native=("float16",))
    result = accuracy.measure(nan, FLOAT16)
    assert result.all_nan and result.figures.n_infinite == len(tab)
    assert result.figures.mean_ulp == math.inf  # no finite error to average: not NaN
    assert all(r.mean_ulp == math.inf for r in result.figures.regions)
    assert not accuracy.measure(_planted(), FLOAT16).all_nan

    def raises(x):
        raise ImplementationError("planted")

    broken = Implementation("test", "raises", "gelu", raises, native=("float16",))
    result = accuracy.measure(broken, FLOAT16)
    assert result.figures is None and "planted" in result.failure.reason
    assert result.n_tried == len(tab)

    def raises_in_its_own_code(x):
        return 1 / 0

    own = Implementation("test", "own", "gelu", raises_in_its_own_code, native=("float16",))
    failure = accuracy.measure(own, FLOAT16).failure
    assert "raises_in_its_own_code" in failure.traceback and "ZeroDivisionError" in (
        failure.traceback)
    assert "gelucheck/backends" not in failure.traceback  # its own frames, not ours


def test_keep_errors_keeps_the_outputs_and_one_error_per_input(exact_at_x0):
    wrong = _next_up(exact_at_x0)
    result = accuracy.measure(_planted({X0: wrong}), FLOAT16, keep_errors=True)
    tab = reference_data.table(FLOAT16, "gelu")
    i = int(np.flatnonzero(tab.x == np.float16(X0))[0])
    assert len(result.errors) == len(tab) and result.outputs[i] == np.float16(wrong)
    assert result.errors[i] == pytest.approx(_ulps_from_mpmath(wrong, X0), rel=1e-9)
    assert accuracy.measure(_planted(), FLOAT16).errors is None


def test_correctly_rounded_is_decided_by_value():
    y = np.array([1.0, -0.0, np.nan, 2.0, np.nan], dtype=np.float16)
    rounded = np.array([1.0, 0.0, np.nan, 2.001953125, 1.0], dtype=np.float16)
    assert accuracy.correctly_rounded(y, rounded).tolist() == [True, True, True, False, False]


def test_worst_index_prefers_an_infinite_error_and_ignores_nan():
    assert accuracy.worst_index(np.array([0.3, np.nan, 2.0, 1.0])) == 2
    assert accuracy.worst_index(np.array([0.3, np.inf, 2.0])) == 1
    assert accuracy.worst_index(np.array([np.nan, 0.0])) == 1


# -- special inputs ---------------------------------------------------------------------

# GELU's value at each special input of float16, by hand: the limits (0 and inf), and the
# finite ones: GELU(±max) = max·Φ(±max) rounds to max and -0; GELU(±tiny) = ±tiny/2 rounds
# (a tie, to even) to ±0.
GELU_SPECIALS = {"+0": 0.0, "-0": -0.0, "+inf": math.inf, "-inf": -0.0, "nan": math.nan,
                 "+max": 65504.0, "-max": -0.0, "+min_subnormal": 0.0,
                 "-min_subnormal": -0.0}


def _specials_kernel(changes: dict[str, float] | None = None):
    values = {**GELU_SPECIALS, **(changes or {})}
    inputs = specials.special_inputs(FLOAT16)

    def kernel(x):
        out = []
        for v in x.astype(np.float64):
            label = next(k for k, s in inputs.items()
                         if (math.isnan(s) and math.isnan(v))
                         or (s == v and math.copysign(1, s) == math.copysign(1, v)))
            out.append(values[label])
        return np.array(out, dtype=np.float16)

    return Implementation("test", "specials", "gelu", kernel, native=("float16",))


def test_the_special_inputs_of_a_format():
    got = specials.special_inputs(FLOAT16)
    assert got["+max"] == 65504.0 and got["-max"] == -65504.0
    assert got["+min_subnormal"] == 2.0**-24 and got["-min_subnormal"] == -(2.0**-24)
    assert math.copysign(1, got["-0"]) == -1 and math.isnan(got["nan"])
    assert got["+inf"] == math.inf and got["-inf"] == -math.inf and len(got) == 9


def test_exact_specials_all_pass_with_their_expected_values():
    out = specials.check(_specials_kernel(), FLOAT16)
    assert all(o.ok for o in out.values()), {k: o for k, o in out.items() if not o.ok}
    assert out["-inf"].expected == 0.0 and out["+inf"].expected == math.inf
    assert out["+max"].expected == 65504.0 and math.isnan(out["nan"].expected)
    assert out["+max"].input == 65504.0 and out["-max"].input == -65504.0


@pytest.mark.parametrize("label, value", [
    ("+inf", math.nan), ("-inf", math.nan), ("nan", 0.0), ("+inf", 65504.0),
    ("+max", math.inf), ("+max", 65440.0),  # two float16 ulps (32 each) below the largest
    ("+0", 2.0**-23), ("-max", -(2.0**-23))])  # two quanta
def test_a_wrong_special_is_the_only_one_that_fails(label, value):
    out = specials.check(_specials_kernel({label: value}), FLOAT16)
    assert [k for k, o in out.items() if not o.ok] == [label]
    assert out[label].computed == value or (math.isnan(value) and math.isnan(out[label].computed))


@pytest.mark.parametrize("label, value", [("+max", 65472.0), ("-0", 0.0), ("-inf", 0.0),
                                          ("-max", 0.0), ("+min_subnormal", -0.0)])
def test_within_one_ulp_or_a_zero_of_the_other_sign_passes(label, value):
    """A finite special passes within one ulp (65472 is one float16 ulp below 65504); zeros
    compare by value, so -0 for +0 (and the reverse) pass."""
    out = specials.check(_specials_kernel({label: value}), FLOAT16)
    assert all(o.ok for o in out.values())


def test_a_special_check_that_raises_is_a_failure():
    def raises(x):
        raise ImplementationError("planted")

    got = specials.check(Implementation("test", "r", "gelu", raises, native=("float16",)),
                         FLOAT16)
    assert "planted" in got.reason


def test_fraction_check_of_the_planted_figure(exact_at_x0):
    """The mpmath figure used above, once more by exact rational arithmetic: 1.5·Φ(1.5) is
    irrational, so take mpmath's 50 digits as a Fraction and the float16 ulp at 1.3 (2^-10)."""
    wrong = _next_up(exact_at_x0)
    v = Fraction(str(mpmath.nstr(_gelu_mp(X0), 45)))
    expected = abs(Fraction(wrong) - v) / Fraction(1, 1024)
    assert float(expected) == pytest.approx(_ulps_from_mpmath(wrong, X0), rel=1e-12)


def test_the_result_says_what_was_measured_how_and_where():
    impl = _planted(description="planted, correctly rounded", version="v1.2")
    result = accuracy.measure(impl, FLOAT16)
    assert result.reference == "gelu" and result.description == "planted, correctly rounded"
    assert result.how == "native" and result.identity.backend_version == "v1.2"
    assert [(r.lo, r.hi) for r in result.figures.regions] == [
        (-math.inf, -5.0), (-5.0, -1.0), (-1.0, 0.0), (0.0, 1.0), (1.0, 5.0), (5.0, math.inf)]


def test_a_wider_computation_is_said_in_how():
    tab = reference_data.table(FLOAT16, "gelu")
    rounded, x16 = tab.rounded("gelu"), tab.x
    index = {float(v): i for i, v in enumerate(x16)}
    wide = Implementation("test", "wide", "gelu",
                          lambda x: np.array([rounded[index[float(v)]] for v in x], np.float64),
                          native=("float64",), wider={"float16": "float64"})
    result = accuracy.measure(wide, FLOAT16)
    assert result.how == wide.how(FLOAT16) and "float64" in result.how
    assert result.figures.not_correctly_rounded == 0


def test_a_measurement_calls_the_implementation_once_on_the_stored_inputs():
    """measurement.evaluate loads one Case (checks/case.py): the accuracy, the fingerprint
    and the diagnosis read its outputs, not a call each (the minimum and the special inputs
    call it on inputs of their own)."""
    from gelucheck import measurement

    stored = len(reference_data.table(FLOAT16, "gelu").x)
    calls = []
    planted = _planted({X0: _next_up(X0, 3)})
    counted = Implementation("test", "counted", "gelu",
                             lambda x: calls.append(len(x)) or planted.kernel(x),
                             native=("float16",))
    result = measurement.evaluate(counted, FLOAT16)
    assert result.figures is not None and result.fingerprint is not None
    assert result.diagnosis is not None
    assert calls.count(stored) == 1, calls

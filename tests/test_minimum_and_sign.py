"""GELU's negative minimum, the sign of its derivative and the regions of x, checked field by
field on float16 implementations built from the stored correctly rounded values (x* and
GELU(x*) from the mission's figures: -0.75179152469356445746, -0.16997120747990366169)."""
import math

import mpmath
import numpy as np
import pytest

from gelucheck.backends import Implementation, ImplementationError
from gelucheck.checks import minimum, reference_data, regions, sign
from gelucheck.formats import BFLOAT16, FLOAT16, FLOAT64
from gelucheck.results import Failure

X_STAR, GELU_X_STAR = -0.75179152469356445746, -0.16997120747990366169


def _planted(function="gelu", changes=None, name="planted"):
    """Correctly rounded in float16 (the stored values), but ``changes(x, y)`` applied."""
    tab = reference_data.table(FLOAT16, function)
    index = {float(v): i for i, v in enumerate(tab.x)}
    rounded = tab.rounded(function)

    def kernel(x):
        y = rounded[[index[float(v)] for v in x]].copy()
        if changes is not None:
            changes(x.astype(np.float64), y)
        return y

    return Implementation("test", name, function, kernel, native=("float16",))


def _window():
    return minimum.window(FLOAT16, np.float16(X_STAR), 0.43)[0]


# The window around x*

def test_the_window_is_eight_plateau_widths_each_side_of_its_centre():
    centre = np.float16(X_STAR)
    xs, stride = minimum.window(FLOAT16, centre, 0.43)
    # 8·sqrt(2^(11-2) / 0.43) = 276.05: 277 values each side, one encoding apart
    assert (stride, len(xs), xs[277]) == (1, 555, centre)
    assert np.all(FLOAT16.step(xs[:-1], 1) == xs[1:])


def test_a_narrow_window_keeps_64_values_each_side():
    xs, stride = minimum.window(BFLOAT16, np.array([-0.75], BFLOAT16.dtype)[0], 100.0)  # 6.4 wide
    assert (stride, len(xs)) == (1, 129)


def test_a_wide_window_is_strided_past_2_to_the_15_values_each_side():
    half = 8 * math.sqrt(2.0**51 / 0.43)  # float64: 5.8e8 encodings
    xs, stride = minimum.window(FLOAT64, np.float64(X_STAR), 0.43)
    count = len(xs) // 2
    assert len(xs) == 2 * count + 1 and xs[count] == np.float64(X_STAR)
    assert count <= 2**15 and stride * count >= half > stride * (count - 1)
    assert FLOAT64.step(xs[0], stride) == xs[1]


# The minimum check

def test_a_correctly_rounded_gelu_has_x_star_on_its_plateau_of_smallest_outputs():
    impl = _planted()
    found = minimum.check(impl, FLOAT16)
    xs = _window()
    y = impl(xs).astype(np.float64)
    on = np.flatnonzero(y == y.min())
    assert found.x_star == pytest.approx(X_STAR, abs=1e-16)
    assert found.x_star_rounded == float(np.float16(X_STAR))
    assert found.exact_value == pytest.approx(GELU_X_STAR, abs=1e-17)
    assert found.value == float(np.float16(GELU_X_STAR)) and found.value_ulp_error <= 0.5
    assert (found.window, found.stride) == ([float(xs[0]), float(xs[-1])], 1)
    assert (found.plateau_size, found.plateau_lo, found.plateau_hi) == (
        on.size, float(xs[on[0]]), float(xs[on[-1]]))
    assert on.size > 1 and found.contiguous and found.true_argmin_on_plateau


def test_a_smallest_output_far_from_x_star_breaks_the_plateau():
    xs = _window()
    smallest = float(np.float16(GELU_X_STAR))

    def far(x, y):
        y[x == float(xs[-1])] = smallest

    found = minimum.check(_planted(changes=far), FLOAT16)
    assert found.plateau_hi == float(xs[-1]) and not found.contiguous

    def off_x_star(x, y):
        y[x == float(np.float16(X_STAR))] = 0.0

    assert not minimum.check(_planted(changes=off_x_star), FLOAT16).true_argmin_on_plateau


def test_a_minimum_that_cannot_be_measured_says_why():
    def boom(x):
        raise ImplementationError("boom")

    assert minimum.check(Implementation("test", "boom", "gelu", boom, native=("float16",)),
                         FLOAT16) == Failure("test:boom boom")
    nan = Implementation("test", "nan", "gelu", lambda x: np.full_like(x, np.nan),
                         native=("float16",))
    assert minimum.check(nan, FLOAT16) == Failure(
        "test:nan gives NaN at every input around x*")


# The derivative's sign

def test_a_correctly_rounded_derivative_changes_sign_once_at_x_star():
    impl = _planted("gelu_grad")
    found = sign.check(impl, FLOAT16)
    assert (found.n_wrong_sign, found.n_false_zero, found.examples) == (0, 0, [])
    xs = _window()
    y = impl(xs).astype(np.float64)
    assert found.crossing_lo == float(xs[np.flatnonzero(y < 0)[-1]])
    assert found.crossing_hi == float(xs[np.flatnonzero(y > 0)[0]])
    assert found.crossing_lo < X_STAR < found.crossing_hi
    assert found.sign_changes == 1 and found.x_star_in_crossing
    assert found.x_star == pytest.approx(X_STAR, abs=1e-16)


def _grad(x: float) -> float:
    x = mpmath.mpf(x)
    return float(mpmath.ncdf(x) + x * mpmath.npdf(x))


def test_wrong_signs_and_false_zeros_are_counted_the_largest_first():
    def planted(x, y):
        y[x == 2.0] = -1.0          # GELU′(2) = 1.085: off by 2.09
        y[x == 0.5] = -0.5          # GELU′(0.5) = 0.867: off by 1.37
        y[np.isin(x, [1.0, 3.0, 4.0])] = 0.0  # false zeros
        y[x == -20.0] = 0.0         # GELU′(-20) rounds to 0: a true zero

    found = sign.check(_planted("gelu_grad", planted), FLOAT16)
    assert (found.n_wrong_sign, found.n_false_zero) == (2, 3)
    first, second = found.examples[:2]
    assert set(first) == {"x", "x_hex", "computed", "exact"}
    assert (first["x"], first["x_hex"], first["computed"]) == (2.0, FLOAT16.hex(2.0), -1.0)
    assert first["exact"] == pytest.approx(_grad(2.0), rel=1e-12)
    assert (second["x"], second["computed"]) == (0.5, -0.5)
    # then the false zeros, the largest first: GELU′(1) = 1.083, GELU′(3) = 1.012, GELU′(4) = 1.0005
    assert [e["x"] for e in found.examples[2:]] == [1.0, 3.0, 4.0]
    assert len(found.examples) == sign.EXAMPLES


def test_a_zero_in_the_crossing_is_neither_sign_nor_a_change():
    xs = _window()
    y = _planted("gelu_grad")(xs).astype(np.float64)
    last_negative = np.flatnonzero(y < 0)[-1]

    def zero_between(x, out):  # the last negative output and the first positive become 0
        out[np.isin(x, [float(xs[last_negative]), float(xs[last_negative + 1])])] = 0.0

    found = sign.check(_planted("gelu_grad", zero_between), FLOAT16)
    assert found.crossing_lo == float(xs[last_negative - 1])
    assert found.crossing_hi == float(xs[last_negative + 2])
    assert found.sign_changes == 1 and found.x_star_in_crossing


def test_a_crossing_away_from_x_star_or_missing_is_not_at_x_star():
    xs = _window()
    y = _planted("gelu_grad")(xs).astype(np.float64)
    beyond = xs[np.flatnonzero(y > 0)[:20]].astype(np.float64)

    def late(x, out):  # negative for 20 more inputs: the sign changes once, right of x*
        out[np.isin(x, beyond)] = -0.001

    found = sign.check(_planted("gelu_grad", late), FLOAT16)
    assert found.sign_changes == 1 and found.crossing_lo > X_STAR
    assert not found.x_star_in_crossing

    def positive(x, out):
        out[:] = np.abs(out) + np.float16(0.001)

    found = sign.check(_planted("gelu_grad", positive), FLOAT16)
    assert found.crossing_lo is None and found.crossing_hi == float(xs[0])
    assert not found.x_star_in_crossing

    def negative(x, out):
        out[:] = -np.abs(out) - np.float16(0.001)

    found = sign.check(_planted("gelu_grad", negative), FLOAT16)
    assert found.crossing_hi is None and not found.x_star_in_crossing


def test_a_sign_that_cannot_be_measured_says_why():
    def boom(x):
        raise ImplementationError("boom")

    impl = Implementation("test", "boom", "gelu_grad", boom, native=("float16",))
    assert sign.check(impl, FLOAT16) == Failure("test:boom boom")


# Regions of x

def test_a_region_holds_its_lower_edge_and_not_its_upper():
    x = np.array([-5.0, -1.0, 0.0, 1.0, 5.0], dtype=np.float16)
    assert regions.mask(x, -1.0, 1.0).tolist() == [False, True, True, False, False]


@pytest.mark.parametrize("x, name", [
    (-math.inf, "x<-5"), (-5.0, "-5<=x<-1"), (-1.0, "-1<=x<0"), (-0.0, "0<=x<1"),
    (1.0, "1<=x<5"), (4.999, "1<=x<5"), (5.0, "x>=5"), (math.inf, "x>=5"), (math.nan, "all"),
])
def test_every_input_has_its_region_infinities_included(x, name):
    assert regions.region_of(x) == name


def test_a_regions_figures_are_those_given():
    r = regions.region("0<=x<1", 0.0, 1.0, np.int64(7), np.float32(2.5), 0.25,
                       np.float16(0.5), FLOAT16, np.int64(3))
    assert (r.name, r.lo, r.hi, r.n, r.max_ulp, r.mean_ulp, r.worst_input,
            r.worst_input_hex, r.not_correctly_rounded) == (
        "0<=x<1", 0.0, 1.0, 7, 2.5, 0.25, 0.5, "0x3800", 3)
    assert all(type(v) is t for v, t in ((r.n, int), (r.max_ulp, float),
                                         (r.not_correctly_rounded, int)))

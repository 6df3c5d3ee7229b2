"""Each defect detector at its thresholds (docs/design.md, Defect signatures): small
measurements built by hand, one input on each side of every edge the design states, so that
moving an edge, a comparison or a share changes the verdict."""
import math

import numpy as np
import pytest

from gelucheck import signatures as sg
from gelucheck.checks.regions import region_of
from gelucheck.formats import FORMATS, narrow
from gelucheck.functions import FUNCTIONS
from gelucheck.results import Signature, SpecialOutcome

F16, F32 = FORMATS["float16"], FORMATS["float32"]
Q16, SN16 = 2.0**-24, 2.0**-14  # float16's quantum and smallest normal


def measured(function, fmt, rounded, y, x=None, exact=None, errors=None, order=None):
    """A measurement of ``function`` in ``fmt``: x defaults to distinct inputs -1, -2, ...;
    the exact values to the rounded ones; the errors to |y - exact| in ulps of exact."""
    rounded, y = np.asarray(rounded, float), np.asarray(y, float)
    x = -np.arange(1.0, len(y) + 1) if x is None else np.asarray(x, float)
    exact = rounded if exact is None else np.asarray(exact, float)
    if errors is None:
        with np.errstate(invalid="ignore"):
            errors = np.abs(y - exact) / fmt.ulp_of(exact)
    return sg.Measured(FUNCTIONS[function], fmt, x, y, rounded, exact,
                       np.asarray(errors, float), order)


# The evidence: where a signature begins and where it is worst

def test_the_evidence_names_the_input_nearest_0_and_the_worst_a_nan_error_first():
    m = measured("gelu", F16, [1.0] * 4, [1.0] * 4, x=[3.0, -1.0, 0.5, 2.0],
                 errors=[1.0, math.nan, 5.0, 2.0])
    sig = m.evidence(np.ones(4, bool), "overflow", "advice")
    assert (sig.count, sig.first, sig.worst, sig.region, sig.detail) == (
        4, 0.5, -1.0, region_of(-1.0), "")
    m = measured("gelu", F16, [1.0] * 3, [1.0] * 3, x=[-3.0, 2.0, -0.25],
                 errors=[1.0, 7.0, 2.0])
    sig = m.evidence(np.ones(3, bool), "overflow", "advice")
    assert (sig.first, sig.worst) == (-0.25, 2.0)


def test_total_loss_begins_at_half_the_value_and_at_the_smallest_normal():
    m = measured("gelu", F16, [SN16, 1.0, 1.0, SN16 / 2], [0.0, 1.5, 1.4, 0.0])
    assert m.lost().tolist() == [True, True, False, False]


# flush-to-zero: half of the subnormals 4 or more quanta from 0 come back as 0, and the
# normal values just above (up to 2^8 times the smallest normal) are right

def _flush(rounded, y):
    return sg.flush_to_zero(measured("gelu", F16, rounded, y))


def test_flushing_what_rounding_to_a_few_quanta_may_give_is_no_flush():
    assert _flush([Q16, 2 * Q16, 3 * Q16], [0.0, 0.0, 0.0]) is None


def test_a_subnormal_of_four_quanta_flushed_is_a_flush():
    sig = _flush([4 * Q16], [0.0])
    assert sig.name == "flush-to-zero" and sig.count == 1
    assert sig.advice == sg.advice("flush-to-zero")


def test_half_of_the_subnormals_flushed_is_a_flush():
    assert _flush([4 * Q16, 5 * Q16], [0.0, 5 * Q16]).count == 1
    assert _flush([4 * Q16, 5 * Q16, 6 * Q16], [0.0, 5 * Q16, 6 * Q16]) is None


def test_the_smallest_normal_is_not_a_subnormal_and_an_exact_zero_not_a_flush():
    assert _flush([SN16, 4 * Q16], [SN16, 4 * Q16]) is None
    assert _flush([0.0, 0.0, 4 * Q16, 5 * Q16], [0.0, 0.0, 0.0, 0.0]).count == 2


ONES = [1.0] * 5  # right values far above the subnormals: no part of the test near them


def test_a_cancellation_that_reaches_the_subnormals_is_no_flush():
    assert _flush([4 * Q16, SN16, *ONES], [0.0, 0.0, *ONES]) is None
    assert _flush([4 * Q16, 64 * SN16, 64 * SN16], [0.0, 0.0, 0.0]) is None


def test_half_the_normal_values_above_lost_is_still_a_flush():
    assert _flush([4 * Q16, SN16, 2 * SN16], [0.0, 0.0, 2 * SN16]) is not None


def test_values_from_2_to_the_8_smallest_normals_up_are_not_the_ones_just_above():
    assert _flush([4 * Q16, SN16, 256 * SN16, 256 * SN16], [0.0, SN16, 0.0, 0.0]) is not None


# nan-at-infinity and nan, over the stored inputs (where a row holds ±inf)

def test_nan_at_infinity_is_a_nan_at_an_infinite_input_only():
    x = [-math.inf, math.inf, 1.0, 2.0]
    m = measured("gelu", F16, [0.0, math.inf, 0.84, 1.95], [math.nan, math.inf, math.nan, 1.95],
                 x=x)
    sig = sg.nan_at_infinity(m)
    assert (sig.name, sig.count, sig.first) == ("nan-at-infinity", 1, -math.inf)
    assert sig.advice == sg.advice("nan-at-infinity")
    assert (sg.nan(m).count, sg.nan(m).first) == (1, 1.0)


# tail-cancellation: total loss in a tail where the function decays to 0 (|x| >= 1), at
# least 3 inputs and 80% of the tail from where it starts

def _tail(function, lost_at, right_at=(), exact_at=None):
    """Total loss at the inputs ``lost_at``, right values at ``right_at``; every exact value
    0.01 but those given in ``exact_at``."""
    x = np.array([*lost_at, *right_at], float)
    exact = np.full(len(x), 0.01)
    for at, value in (exact_at or {}).items():
        exact[list(x).index(at)] = value
    y = np.where(np.isin(x, lost_at), 0.0, exact)
    return sg.tail_cancellation(measured(function, F16, exact, y, x=x))


def test_a_tail_is_where_the_function_decays_to_0():
    assert _tail("phi", [2.0, 3.0, 4.0, 5.0]) is None  # Φ's right tail goes to 1
    assert _tail("erfc", [2.0, 3.0, 4.0]).count == 3
    assert _tail("phi_grad", [2.0, 3.0, 4.0]).count == 3  # φ: both tails
    assert _tail("phi_grad", [-4.0, -3.0, -2.0, 2.0, 3.0, 4.0]).count == 6


def test_a_tail_begins_at_a_distance_of_1_from_0_with_three_inputs():
    assert _tail("phi", [-1.0, -2.0, -3.0]).count == 3
    assert _tail("phi", [-1.1, -1.2, -1.5]).count == 3
    assert _tail("phi", [-0.6, -0.7, -0.9]) is None
    assert _tail("erfc", [0.6, 0.7, 0.9]) is None
    assert _tail("phi", [-2.0, -3.0]) is None


def test_a_tail_loss_covers_80_percent_of_the_tail_beyond_where_it_starts():
    assert _tail("phi", [-3.0, -4.0, -5.0], right_at=[-4.5]) is None  # 3 of 4
    assert _tail("phi", [-2.0, -3.0, -4.0, -5.0], right_at=[-4.5]).count == 4  # 4 of 5
    # a right value at the smallest normal is still a normal value of the tail: 3 of 4
    assert _tail("phi", [-2.0, -3.0, -4.0], right_at=[-3.5], exact_at={-3.5: SN16}) is None


# absolute-error: total loss for |x| < 1 in erf or GELU, at least 3 inputs

def _near_zero(lost_at):
    x = np.array(lost_at, float)
    return sg.absolute_error(measured("erf", F16, x, np.zeros(len(x)), x=x))


def test_an_absolute_error_is_below_x_1_with_three_inputs():
    assert _near_zero([0.25, 0.5, 0.9]).count == 3
    assert _near_zero([0.5, 0.9, 1.0, 1.5]) is None


# biased: in the body 1/8 <= |x| <= 4, 95% of the misrounded outputs on one side, at least 20
# of them and 20% of the body

def _biased(x, factor, exact=None):
    x = np.asarray(x, float)
    rounded = np.array(x if exact is None else exact, float)
    return sg.biased(measured("gelu", F16, rounded, rounded * np.asarray(factor), x=x))


UP, DOWN = 1 + 2.0**-9, 1 - 2.0**-9  # misrounded away from zero, toward it


def test_a_bias_is_counted_over_the_body_edges_included():
    x = np.linspace(0.125, 4.0, 20)
    exact = x.copy()
    exact[5] = 1.0  # a value of 1 is a value like any other
    sig = _biased(x, UP, exact)
    assert (sig.name, sig.count, sig.detail) == ("biased", 20, "away from zero")
    assert sig.advice == sg.advice("biased", direction="away from zero")
    assert _biased(x, DOWN).detail == "toward zero"


def test_misrounded_outputs_outside_the_body_are_not_weighed():
    x = np.concatenate([np.linspace(0.125, 4.0, 20), np.full(5, 10.0)])
    assert _biased(x, np.r_[np.full(20, UP), np.full(5, DOWN)]).count == 20


def test_a_bias_needs_20_misrounded_and_a_fifth_of_the_body():
    x = np.linspace(0.5, 3.0, 100)
    assert _biased(x, np.r_[np.full(20, UP), np.ones(80)]).count == 20
    assert _biased(x, np.r_[np.full(19, UP), np.ones(81)]) is None
    x = np.linspace(0.5, 3.0, 150)
    assert _biased(x, np.r_[np.full(25, UP), np.ones(125)]) is None  # 25 < 30


def test_a_bias_is_95_percent_to_one_side():
    x = np.linspace(0.5, 3.0, 20)
    assert _biased(x, np.r_[np.full(19, UP), [DOWN]]).count == 20
    assert _biased(x, np.r_[np.full(18, UP), [DOWN, DOWN]]) is None
    assert _biased(x, np.r_[np.full(10, UP), np.full(10, DOWN)]) is None


# low-precision: the body's outputs on a narrower format's grid (90% of the candidates, at
# least 50), else the body's median error from 1/256 to 16 times 2^(p - p') ulps

def _off_grid(n, start=1.0):
    """n float32 values in the body off the bfloat16 (and float16) grid."""
    return (start + (np.arange(n) + 0.5) * 2.0**-18).astype(np.float32).astype(float)


def _low(rounded, y, x=None, errors=None):
    rounded = np.asarray(rounded, float)
    x = np.linspace(0.5, 3.0, len(rounded)) if x is None else x
    return sg.low_precision(measured("gelu", F32, rounded, y, x=x, errors=errors))


def test_outputs_on_a_narrower_grid_are_that_formats_precision():
    r = _off_grid(60)
    y = narrow(r, "bfloat16").astype(float)
    y[54:] = r[54:]  # 54 of 60 candidates on the grid: 90%
    sig = _low(r, y)
    assert (sig.name, sig.count, sig.detail) == ("low-precision", 54, "bfloat16 inside float32")
    assert sig.advice == sg.advice("low-precision", narrow="bfloat16", format="float32")
    y[53] = r[53]
    assert _low(np.r_[r, np.ones(100)], np.r_[y, np.ones(100)]) is None  # 53 of 60


def test_fifty_candidates_are_enough_and_only_the_misrounded_are_counted():
    r = _off_grid(50)
    y = narrow(r, "bfloat16").astype(float)
    on_grid = np.ones(3)  # on both grids: not candidates, though 1 ulp off
    y_on = on_grid * (1 + 2.0**-23)
    sig = _low(np.r_[r, on_grid], np.r_[y, y_on])
    assert (sig.count, sig.detail) == (50, "bfloat16 inside float32")
    assert sig.advice == sg.advice("low-precision", narrow="bfloat16", format="float32")
    assert _low(r[:49], y[:49]) is None  # 49 are too few, for the grid and the scale
    # 49 candidates beside a body of 50: the scale names float16's rounding instead
    sig = _low(np.r_[r[:49], 1.0], np.r_[y[:49], 1.0])
    assert sig.detail == "float16 inside float32"
    assert sig.advice != sg.advice("low-precision", narrow="float16", format="float32")


def test_the_grid_is_looked_for_in_the_body_only():
    outside = _off_grid(60)
    body = _off_grid(5, 2.0)
    x = np.r_[np.full(60, 10.0), np.linspace(0.5, 3.0, 5)]
    y = np.r_[narrow(outside, "bfloat16").astype(float), body]
    assert _low(np.r_[outside, body], y, x=x) is None


def _scale(median, n=60):
    """The scale test alone: outputs equal to off-grid rounded values, errors given."""
    r = _off_grid(n)
    return _low(r, r, errors=np.full(n, median))


@pytest.mark.parametrize("median, detail", [
    (32.0, "float16"),        # 2^13 / 256: float16's rounding inside float32, from here
    (31.9, None),
    (1000.0, "float16"),
    (131072.0, "float16"),    # 2^13 * 16: up to here
    (135000.0, "bfloat16"),   # then bfloat16's (2^16): up to 2^20
    (2.0**20, "bfloat16"),
    (2.0**20 * 1.01, None),
])
def test_a_median_error_of_a_narrower_rounding_names_the_widest_that_fits(median, detail):
    sig = _scale(median)
    if detail is None:
        assert sig is None
        return
    assert (sig.name, sig.detail, sig.count) == ("low-precision", f"{detail} inside float32", 60)
    assert sig.advice == sg.advice("low-precision", "scale", narrow=detail, format="float32",
                                   median=f"{median:.3g}")


def test_a_median_just_below_1_256_of_the_scale_is_no_narrower_rounding():
    r = _off_grid(60)
    errors = np.r_[np.full(30, 31.8), np.full(30, 32.0)]  # median 31.9 < 2^13 / 256
    assert _low(r, r, errors=errors) is None


def test_the_scale_test_counts_the_errors_from_1_256_of_the_scale_and_needs_50_inputs():
    r = _off_grid(60)
    errors = np.r_[np.full(40, 100.0), np.full(10, 32.0), np.full(10, 31.95)]
    assert _low(r, r, errors=errors).count == 50
    x = np.r_[np.linspace(0.5, 3.0, 60), np.full(5, 10.0)]  # big errors outside the body
    sig = _low(np.r_[r, _off_grid(5)], np.r_[r, _off_grid(5)], x=x,
               errors=np.r_[np.full(60, 100.0), np.full(5, 1e3)])
    assert sig.count == 60
    assert _scale(100.0, n=50).count == 50 and _scale(100.0, n=49) is None


# out-of-range: more than 4 ulps below GELU's minimum (or a value the function cannot have)

def test_below_the_minimum_is_out_of_range_from_more_than_4_ulps():
    value = float(narrow(np.array([-0.16997120747990366169]), F16)[0])
    unit = float(F16.ulp_of(np.array([value]))[0])
    m = lambda y: measured("gelu", F16, [value], [y], x=[-0.75])
    assert sg.out_of_range(m(value - 4 * unit)) is None
    sig = sg.out_of_range(m(value - 5 * unit))
    assert sig.count == 1 and sig.advice == sg.advice("out-of-range", "minimum", ulps="4")
    assert sg.out_of_range(measured("erf", F16, [0.5], [1.5], x=[0.5])).advice == sg.advice(
        "out-of-range")


# not-monotone: a descent of more than an ulp where the function and its rounded values rise,
# between outputs within 4 ulps; GELU from 2^-6 right of x* on

def _turn(function, x, y, rounded, errors=None, order=None):
    return sg.not_monotone(measured(function, F16, rounded, y, x=x,
                                    errors=np.zeros(len(y)) if errors is None else errors,
                                    order=order))


def test_a_descent_of_more_than_an_ulp_is_a_turn_back():
    u = 2.0**-11  # float16's ulp in [0.5, 1)
    x, r = [0.1, 0.2, 0.3], [0.5, 0.5 + 4 * u, 0.5 + 8 * u]
    assert _turn("phi", x, [0.5 + 2 * u, 0.5 + u, 0.5 + 8 * u], r) is None  # one ulp back
    sig = _turn("phi", x, [0.5 + 3 * u, 0.5 + u, 0.5 + 8 * u], r)
    assert (sig.name, sig.count, sig.first, sig.worst) == ("not-monotone", 1, 0.2, 0.2)
    assert sig.advice == sg.advice("not-monotone")
    assert _turn("phi", x[:2], [0.5 + 3 * u, 0.5 + u], r[:2]).count == 1  # two outputs do


def test_a_step_down_where_the_rounded_values_are_level_turns_back_if_it_is_off_by_two():
    """A strictly increasing Φ whose rounded values stay level over neighbours (float16 near
    1): two outputs each an ulp off, one up one down, are rounding noise; one output two ulps
    below the rest is a turn back (issue 51: no signature at all)."""
    u = 2.0**-11
    x, r = [3.0, 3.01, 3.02], [1 - 4 * u] * 3
    assert _turn("phi", x, [1 - 3 * u, 1 - 5 * u, 1 - 4 * u], r) is None  # noise
    sig = _turn("phi", x, [1 - 4 * u, 1 - 6 * u, 1 - 4 * u], r)
    assert (sig.count, sig.first) == (1, 3.01)
    assert _turn("phi", x, [1 - 4 * u, 1 - 5 * u, 1 - 4 * u], r) is None  # one ulp: noise


def test_level_after_a_rise_is_still_level():
    """Each step compares neighbours, not the first output: a wobble of an ulp each way on a
    level stretch after a rise is noise, a step two ulps down there turns back."""
    u = 2.0**-11
    x, r = [0.1, 0.2, 0.3, 0.4], [0.5, 0.75, 0.75, 0.75]
    assert _turn("phi", x, [0.5, 0.75 + u, 0.75 - u, 0.75], r) is None
    assert _turn("phi", x, [0.5, 0.75, 0.75 - 2 * u, 0.75], r).first == 0.3
    # an output far off elsewhere does not make a neighbouring pair's wobble a turn back
    level = [0.75] * 4
    assert _turn("phi", x, [0.75 - 2 * u, 0.75 + u, 0.75 - u, 0.75], level) is None


def test_the_ulp_of_a_turn_back_is_the_larger_of_the_two_outputs():
    # 1 - 3·2^-11 after 1: 1.5 ulps of 1 (2^-10); the next output, 4, has an ulp of 2^-8
    y = [1.0, 1 - 3 * 2.0**-11, 4.0]
    sig = _turn("phi", [0.1, 0.2, 0.3], y, [0.99, 0.995, 4.0])
    assert sig is not None and sig.first == 0.2


def test_only_outputs_within_4_ulps_make_a_seam():
    u = 2.0**-11
    x, r = [0.1, 0.2], [0.5, 0.5 + 4 * u]
    y = [0.5 + 3 * u, 0.5 + u]
    assert _turn("phi", x, y, r, errors=[4.0, 4.0]).count == 1
    assert _turn("phi", x, y, r, errors=[4.5, 0.0]) is None


def test_erfc_falls_and_gelu_rises_from_just_right_of_its_minimum():
    u = 2.0**-11
    assert _turn("erfc", [0.1, 0.2], [0.5, 0.5 + 3 * u], [0.5 + 4 * u, 0.5]).count == 1
    v = 2.0**-13  # float16's ulp in [0.125, 0.25)
    r = [-0.16, -0.16 + 4 * v]
    y = [-0.16 + 3 * v, -0.16 + v]
    assert _turn("gelu", [-0.76, -0.755], y, r) is None  # within 2^-6 of x* = -0.7518
    assert _turn("gelu", [-0.5, -0.49], y, r).count == 1
    assert _turn("gelu", [-0.5, -0.49], [-0.16 + 2 * v, -0.16 + v], r) is None  # one ulp
    assert _turn("gelu", [-0.5, -0.49], y, r, order=np.array([0, 1])).count == 1


# wrong-sign and false-zero: derivatives

def test_a_derivative_of_the_wrong_sign_is_one_whose_exact_value_is_not_0():
    m = measured("gelu_grad", F16, [0.0, 1.0], [1e-5, -1.0], x=[-0.5, 2.0])
    sig = sg.wrong_sign(m)
    assert (sig.count, sig.first) == (1, 2.0) and sig.advice == sg.advice("wrong-sign")


# the special inputs' outcomes

def test_the_special_inputs_show_overflow_and_nan_at_infinity_with_their_first_input():
    outcomes = {"+max": SpecialOutcome(60000.0, 60000.0, math.inf, False),
                "-max": SpecialOutcome(-65504.0, -0.0, math.inf, False),
                "nan-at-finite": SpecialOutcome(1.0, 0.84, math.nan, False),
                "-inf": SpecialOutcome(-math.inf, -0.0, math.nan, False),
                "ok": SpecialOutcome(math.inf, math.inf, math.inf, True)}
    found = {s.name: s for s in sg._specials(outcomes)}
    assert set(found) == {"nan-at-infinity", "overflow"}
    over = found["overflow"]
    assert (over.count, over.first, over.worst, over.region, over.detail) == (
        2, 60000.0, 60000.0, region_of(60000.0), "special inputs")
    assert over.advice == sg.advice("overflow")
    assert (found["nan-at-infinity"].count, found["nan-at-infinity"].first) == (1, -math.inf)
    assert sg._specials(None) == []


def test_a_wrong_form_is_named_with_its_formula_for_every_input():
    class Fingerprint:
        mismatch, n_inputs, formula, declared = True, 40, "gelu_tanh", "gelu"

    r = np.array([1.0])
    (sig,) = sg.diagnose(FUNCTIONS["gelu"], F16, r, r, r, r, [0.0], fingerprint=Fingerprint)
    assert (sig.name, sig.count, sig.first, sig.region, sig.detail) == (
        "wrong-form", 40, None, "all", "computes gelu_tanh")
    assert sig.advice == sg.advice("wrong-form", formula="gelu_tanh", declared="gelu")


def test_signatures_append_to_a_failure_one_line_each():
    sig = Signature("nan", 2, 1.0, 2.0, "1<=x<5", "advice")
    assert sg.text([sig, sig]) == f"\n  signature {sig.line()}" * 2 and sg.text([]) == ""


# path-dependent, from a consistency result

def _paths(*differ):
    from gelucheck.results import ConsistencyResult, Identity, PathFigures

    paths = [PathFigures(f"p{i}", 100, n) for i, n in enumerate(differ)]
    return sg.diagnose_paths(ConsistencyResult(Identity("torch", "F.gelu", "gelu", "float32"),
                                               paths=paths))


def test_outputs_that_differ_by_call_path_are_path_dependent():
    assert _paths(0, 0) == []
    (sig,) = _paths(3, 0, 2)
    assert (sig.name, sig.count, sig.first, sig.worst, sig.region, sig.detail) == (
        "path-dependent", 5, None, None, "all", "2 paths")
    assert sig.advice == sg.advice("path-dependent", paths="p0, p2")
    assert _paths(1, 1, 1, 1)[0].advice == sg.advice("path-dependent",
                                                     paths="p0, p1, p2, p3")
    assert _paths(1, 1, 1, 1, 1)[0].advice == sg.advice("path-dependent",
                                                        paths="p0, p1, p2, p3 ...")


# The budgets' recorded defects against the signatures found

class _Budgets:
    """The two things cross_check and propose read of a budgets file."""

    def __init__(self, entries: dict, defects: dict):
        self.entries, self.defects = entries, defects

    def get(self, result):  # an entry per dtype where keyed "impl dtype", else one for all
        key = f"{result.identity.id} {result.identity.dtype}"
        return self.entries.get(key, self.entries.get(result.identity.id))


def _result(impl: str, *found, diagnosis=True, dtype="float32"):
    import built_results as built

    backend, _, name = impl.partition(":")
    sigs = [Signature(s, 1, 1.0, 1.0, "1<=x<5", "advice") for s in found]
    return built.accuracy(of=built.identity(backend, name, dtype=dtype), how="",
                          diagnosis=sigs if diagnosis else None)


DEFECTS = {"cancels": {"signatures": ["tail-cancellation"]},
           "flushes": {"signatures": ["flush-to-zero", "overflow"]},
           "paths": {"signatures": ["path-dependent"]},
           "not-gelu": {"signatures": ["*"]},
           "seldom": {"signatures": ["biased"], "signature_optional": True},
           "unseen": {"signatures": [], "no_signature": "a tie at a subnormal"},
           "unsaid": {"signatures": []},
           "unnamed": {},
           "wrong": {"signatures": ["wrong-sign"]}}


def _check(entries: dict, *results):
    return sg.cross_check(list(results), _Budgets(entries, DEFECTS))


def test_a_recorded_defect_and_its_signature_found_agree():
    assert _check({"a:x": {"defects": ["cancels"]}}, _result("a:x", "tail-cancellation")) == (
        [], [])
    # one of a defect's signatures is enough, in any dtype of the implementation
    assert _check({"a:x": {"defects": ["flushes"]}}, _result("a:x"),
                  _result("a:x", "overflow")) == ([], [])


def test_a_recorded_defect_whose_signature_is_not_found_is_named():
    unmatched, unexplained = _check({"a:x": {"defects": ["flushes"]}}, _result("a:x", "nan"))
    assert unmatched == ["a:x gelu: recorded flushes (expects flush-to-zero, overflow), found nan"]
    assert unexplained == ["a:x gelu float32: nan found, no recorded defect of its entry names "
                           "it (recorded: flushes)"]
    unmatched, _ = _check({"a:x": {"defects": ["cancels"]}}, _result("a:x"))
    assert unmatched == ["a:x gelu: recorded cancels (expects tail-cancellation), found none"]


def test_a_signature_no_defect_names_is_named():
    assert _check({"a:x": {}}, _result("a:x", "biased", "nan")) == ([], [
        "a:x gelu float32: biased found, no recorded defect of its entry names it (recorded: none)",
        "a:x gelu float32: nan found, no recorded defect of its entry names it (recorded: none)"])


def test_a_signature_is_explained_by_its_own_dtypes_entry_not_anothers():
    """The report prints a result's cause from the entry of its dtype: a cancellation found
    in float64 is not explained by the float32 entry's defect (the budgets had named only
    erfc-argument-rounding for SciPy's float64 0.5·(1+erf), 9e15 ulps from erf's cancellation)."""
    entries = {"a:x float32": {"defects": ["cancels"]}, "a:x float64": {"defects": ["wrong"]}}
    unmatched, unexplained = _check(entries, _result("a:x", "tail-cancellation"),
                                    _result("a:x", "tail-cancellation", "wrong-sign",
                                            dtype="float64"))
    assert unmatched == []  # each recorded defect shows in some dtype
    assert unexplained == ["a:x gelu float64: tail-cancellation found, no recorded defect of "
                           "its entry names it (recorded: wrong)"]


def test_every_defect_of_an_entry_explains_what_it_names():
    entries = {"a:x": {"defects": ["cancels", "flushes"]}}
    assert _check(entries, _result("a:x", "tail-cancellation", "overflow")) == ([], [])


def test_defects_that_need_not_show_explain_without_being_found():
    for defect in ("paths", "not-gelu", "seldom", "unseen"):
        assert _check({"a:x": {"defects": [defect]}}, _result("a:x")) == ([], []), defect
    assert _check({"a:x": {"defects": ["seldom"]}}, _result("a:x", "biased")) == ([], [])
    # "*": quick_gelu is not GELU at all, every signature is its defect
    assert _check({"a:x": {"defects": ["not-gelu"]}}, _result("a:x", "nan", "biased")) == (
        [], [])
    assert _check({"a:x": {"defects": ["paths"]}}, _result("a:x", "nan"))[1] == [
        "a:x gelu float32: nan found, no recorded defect of its entry names it (recorded: paths)"]


def test_each_recorded_defect_is_weighed_after_one_that_need_not_show():
    for first in ("unseen", "paths", "seldom"):
        assert _check({"a:x": {"defects": [first, "wrong"]}}, _result("a:x"))[0] == [
            "a:x gelu: recorded wrong (expects wrong-sign), found none"], first


def test_the_names_in_a_finding_are_listed_in_order():
    unmatched, unexplained = _check({"a:x": {"defects": ["cancels", "flushes"]}},
                                    _result("a:x", "nan", "biased"))
    assert unmatched[0] == ("a:x gelu: recorded cancels (expects tail-cancellation), found "
                            "biased, nan")
    assert unexplained[0] == ("a:x gelu float32: biased found, no recorded defect of its entry "
                              "names it (recorded: cancels, flushes)")


def test_a_defect_that_names_no_signature_must_say_why():
    assert _check({"a:x": {"defects": ["unsaid", "unnamed", "cancels"]}},
                  _result("a:x", "tail-cancellation"))[0] == [
        "unnamed: names no signatures (nor no_signature's reason)",
        "unsaid: signatures = [] without a no_signature reason"]


def test_results_without_a_diagnosis_or_a_budget_are_left_out():
    entries = {"a:x": {"defects": ["cancels"]}}
    assert _check(entries, _result("a:x", diagnosis=False), _result("b:y", "nan"),
                  _result("a:x", "tail-cancellation")) == ([], [])
    assert _check(entries, _result("a:x", diagnosis=False), _result("a:x", "nan"))[1] == [
        "a:x gelu float32: nan found, no recorded defect of its entry names it (recorded: cancels)"]
    assert _check(entries, _result("b:y", "nan"), _result("a:x", "nan"))[1] == [
        "a:x gelu float32: nan found, no recorded defect of its entry names it (recorded: cancels)"]


# budgets --write: a signature no recorded defect names becomes a defect to review

def test_a_proposed_defect_is_added_once_for_each_unexplained_signature():
    defects = {"cancels": {"signatures": ["tail-cancellation"]},
               "flushes": {"signatures": ["flush-to-zero"]}}
    entry = {"defects": ["cancels", "flushes"]}
    result = _result("a:x", "tail-cancellation", "flush-to-zero", "nan", "path-dependent",
                     "biased")
    assert sg.propose(result, entry, defects) == ["proposed-nan", "proposed-biased"]
    assert entry["defects"] == ["cancels", "flushes", "proposed-biased", "proposed-nan"]
    assert defects["proposed-nan"]["signatures"] == ["nan"]
    assert defects["proposed-nan"]["reason"].startswith("PROPOSED from the nan signature")
    assert sg.propose(result, entry, defects) == []  # now named
    assert sg.propose(_result("a:x", "nan"), {"defects": ["x"]}, {"x": {"signatures": ["*"]}}) == []
    # a defect the file does not hold, or one without signatures, explains nothing
    entry = {"defects": ["gone", "bare"]}
    assert sg.propose(_result("a:x", "nan"), entry, {"bare": {"reason": "r"}}) == [
        "proposed-nan"]
    fresh: dict = {}
    assert sg.propose(_result("a:x", "nan"), fresh, {}) == ["proposed-nan"]
    assert fresh == {"defects": ["proposed-nan"]}


# The sentences (data/signatures.toml)

def test_every_signature_has_its_sentence_and_every_sentence_a_signature():
    assert set(sg.sentences()) == set(sg.NAMES)
    assert all("advice" in variants and all(isinstance(t, str) and t.strip()
                                            for t in variants.values())
               for variants in sg.sentences().values())


def test_a_damaged_sentence_file_is_refused_with_its_name(tmp_path, monkeypatch):
    from gelucheck.errors import GelucheckError

    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "signatures.toml").write_text("[nan\nadvice = 1\n")
    monkeypatch.setattr(sg.resources, "files", lambda package: tmp_path)
    sg.sentences.cache_clear()
    try:
        with pytest.raises(GelucheckError, match=r"signatures\.toml: not a table of signature"):
            sg.sentences()
    finally:
        sg.sentences.cache_clear()

"""Each rule of the verdict (gelucheck.judge) at its boundary: equal holds, a hair worse
fails, "clearly better" starts at half the budget and a quarter ulp below it, a known defect
turns "better" into a failure, and every part - figures, regions, correct rounding, the
minimum, the sign, the fingerprint, the special inputs, consistency paths and sweeps - is
judged only where the budget records it. Results are built by hand: the figures are given."""
import math

import pytest

import built_results as built
from gelucheck import judge
from gelucheck.budgets import Budgets
from gelucheck.results import (
    AccuracyResult,
    ConsistencyResult,
    Failure,
    Fingerprint,
    Identity,
    MinimumFinding,
    PathFigures,
    SignFinding,
    SpecialOutcome,
)

KEY = ("be:impl", "gelu", "float32")
ID = Identity("be", "impl", "gelu", "float32")
DEFECTS = {"tail": {"reason": "r"}, "ulp-only": {"reason": "r", "affects": ["ulp"]},
           "paths": {"reason": "r", "affects": ["consistency"]},
           "form": {"reason": "r", "affects": ["fingerprint"]}}


def _budgets(**entry) -> Budgets:
    return Budgets(entries={KEY: entry}, defects=DEFECTS)


def _figures(max_ulp=10.0, regions=None, not_correctly_rounded=0, n_inputs=100):
    return built.figures(max_ulp, regions, not_correctly_rounded=not_correctly_rounded,
                         n_inputs=n_inputs)


def _result(**parts) -> AccuracyResult:
    return built.accuracy(of=ID, **parts)


def _verdict(result, **entry):
    return judge.judge(result, _budgets(**entry))


# -- max ulp: worse, equal, better --------------------------------------------------------

@pytest.mark.parametrize("measured, budget, worse, better", [
    (10.0, 10.0, False, False),
    (10.000001, 10.0, True, False),
    (5.0, 10.0, False, False),  # exactly half: not yet clearly better
    (4.999, 10.0, False, True),
    (0.3, 0.5, False, False),  # under half, but not a quarter ulp below
    (0.2499, 0.5, False, True),
    (0.1, 0.3, False, False),  # under half, 0.2 below: not a quarter ulp
    (0.125, 0.375, False, False),  # exactly a quarter ulp below: not more
    (0.124, 0.375, False, True),
    (math.inf, math.inf, False, False),
    (math.inf, 1e30, True, False),
    (1e30, math.inf, False, True),
])
def test_max_ulp_against_its_budget(measured, budget, worse, better):
    v = _verdict(_result(figures=_figures(measured, regions={})), max_ulp=budget,
                 not_correctly_rounded=0)
    assert bool(v.worse) == worse and bool(v.better) == better
    assert v.failed == worse and not v.missing
    if worse:
        assert v.worse == [f"max ulp {measured:.4g} > {budget:.4g}"]
    if better:
        assert v.better == [f"max ulp {measured:.4g} < {budget:.4g}"]


def test_a_region_is_judged_only_where_the_budget_records_it():
    figures = _figures(10.0, regions={"x<-5": 12.0, "0<=x<1": 99.0})
    v = _verdict(_result(figures=figures), max_ulp=10.0, regions={"x<-5": 11.0})
    assert v.worse == ["max ulp in x<-5 12 > 11"]
    assert _verdict(_result(figures=figures), max_ulp=10.0,
                    regions={"x<-5": 12.0}).worse == []


def test_correct_rounding_counts_the_misses_where_the_budget_is_half_an_ulp():
    f = lambda n: _result(figures=_figures(0.5, regions={}, not_correctly_rounded=n))
    assert _verdict(f(2), max_ulp=0.5, not_correctly_rounded=2).worse == []
    assert _verdict(f(3), max_ulp=0.5, not_correctly_rounded=2).worse == [
        "3 results not correctly rounded, the budget allows 2"]
    assert _verdict(f(1), max_ulp=0.5, not_correctly_rounded=2).better == [
        "1 results not correctly rounded, the budget allows 2"]
    assert _verdict(f(1), max_ulp=0.5).worse  # no count recorded: none may miss
    assert _verdict(f(0), max_ulp=0.5).worse == [] and _verdict(f(0), max_ulp=0.5).better == []
    # above half an ulp the count is not a budget
    assert _verdict(f(50), max_ulp=0.51, not_correctly_rounded=0).worse == []


# -- missing, failure, defects ------------------------------------------------------------

def test_no_entry_is_missing_and_fails_with_the_command_to_write_it():
    v = judge.judge(_result(figures=_figures()), Budgets(defects=DEFECTS))
    assert v.missing and v.failed and v.worse == [] and v.defects == []
    assert "gelucheck budgets --write FILE" in v.message()


def test_a_failure_to_measure_is_worse():
    v = _verdict(_result(failure=Failure("boom")), max_ulp=1.0)
    assert v.worse == ["could not be measured: boom"] and v.failed


def test_the_defects_that_count_are_those_of_the_parts_measured():
    entry = {"max_ulp": 10.0, "defects": ["tail", "ulp-only", "paths"]}
    assert _verdict(_result(figures=_figures()), **entry).defects == ["tail", "ulp-only"]
    specials = {"+inf": SpecialOutcome(math.inf, math.inf, math.inf, True)}
    assert _verdict(_result(specials=specials), **entry).defects == ["tail"]
    assert _verdict(_result(), **entry).defects == []


def test_better_than_a_known_defect_fails_and_says_so():
    v = _verdict(_result(figures=_figures(1.0, regions={})), max_ulp=10.0, defects=["tail"])
    assert v.failed and v.defects == ["tail"]
    assert v.message() == ("better than budget, yet recorded as known defect(s) tail - fixed? "
                           "update the budget: max ulp 1 < 10")


def test_the_missing_message_names_the_command_and_gelucheck_s_own_file():
    assert judge.Verdict(missing=True).message() == (
        "no budget recorded: record one with `gelucheck budgets --write FILE` "
        "(gelucheck's own: src/gelucheck/data/budgets.toml)")


def test_better_with_defects_keeps_the_worse_findings_and_names_every_defect():
    v = judge.Verdict(worse=["a"], better=["b"], defects=["d1", "d2"])
    assert v.message() == ("worse than budget: a; better than budget, yet recorded as known "
                           "defect(s) d1, d2 - fixed? update the budget: b")


@pytest.mark.parametrize("part, result", [
    ("minimum", _result(minimum=MinimumFinding(-0.75, -0.75, -0.75, -0.75, 1, True, 1,
                                               [-0.8, -0.7], -0.17, -0.17, True, 0.1))),
    ("sign", _result(sign=SignFinding(0, 0, [], -0.75, -0.76, -0.74, 1, True))),
    ("specials", _result(specials={})),
    ("fingerprint", _result(fingerprint=Fingerprint("exact", "exact", 1, 1.0, {}))),
])
def test_a_defect_of_one_part_counts_where_that_part_is_measured(part, result):
    b = Budgets(entries={KEY: {"defects": ["only"]}},
                defects={"only": {"reason": "r", "affects": [part]}})
    assert judge.judge(result, b).defects == ["only"]
    other = "ulp" if part != "ulp" else "sign"
    b.defects["only"]["affects"] = [other]
    assert judge.judge(result, b).defects == []


def test_messages_list_every_finding():
    v = judge.Verdict(worse=["a", "b"], better=["c"])
    assert v.message() == "worse than budget: a; worse than budget: b; better than budget, " \
                          "can be tightened: c"
    assert v.failed and not judge.Verdict(better=["c"]).failed
    assert judge.Verdict().message() == "" and not judge.Verdict().failed


# -- minimum, sign, fingerprint, specials -------------------------------------------------

def _minimum(value_ulp, on_plateau):
    return MinimumFinding(-0.75, -0.75, -0.75, -0.75, 1, True, 1, [-0.8, -0.7], -0.17, -0.17,
                          on_plateau, value_ulp)


@pytest.mark.parametrize("value_ulp, on, was, worse, better", [
    (0.5, True, True, [], []),
    (0.6, True, True, ["ulp error of the minimum value 0.6 > 0.5"], []),
    (0.5, False, True, ["x* no longer on the plateau of smallest outputs"], []),
    (0.5, True, False, [], ["x* now on the plateau of smallest outputs"]),
])
def test_the_minimum(value_ulp, on, was, worse, better):
    v = _verdict(_result(minimum=_minimum(value_ulp, on)), minimum_value_ulp=0.5,
                 true_argmin_on_plateau=was)
    assert v.worse == worse and v.better == better


def test_a_minimum_not_recorded_is_not_judged():
    assert _verdict(_result(minimum=_minimum(99.0, False))).worse == []
    assert _verdict(_result(minimum=Failure("x")), minimum_value_ulp=0.5,
                    true_argmin_on_plateau=True).worse == []


def _sign(wrong, zero, crossing=True):
    return SignFinding(wrong, zero, [], -0.75, -0.76, -0.74, 1, crossing)


@pytest.mark.parametrize("wrong, zero, crossing, worse, better", [
    (1, 1, True, [], []),
    (2, 1, True, ["results of the wrong sign or falsely zero: 3 > 2"], []),
    (0, 1, True, [], ["results of the wrong sign or falsely zero: 1 < 2"]),
    (1, 1, False, ["the computed derivative no longer changes sign at x*"], []),
])
def test_the_sign(wrong, zero, crossing, worse, better):
    v = _verdict(_result(sign=_sign(wrong, zero, crossing)), wrong_sign=2,
                 x_star_in_crossing=True)
    assert v.worse == worse and v.better == better


def test_a_crossing_not_recorded_is_not_required():
    assert _verdict(_result(sign=_sign(0, 0, False)), wrong_sign=0).worse == []
    assert _verdict(_result(sign=_sign(5, 5, False))).worse == []


def _print(formula, declared="exact"):
    return Fingerprint(formula, declared, 100, 50.0, {})


def test_the_fingerprint():
    same = _verdict(_result(fingerprint=_print("exact")), fingerprint="exact")
    assert same.worse == []
    changed = _verdict(_result(fingerprint=_print("tanh")), fingerprint="exact")
    assert changed.worse == ["fingerprint changed: it computed exact, now tanh",
                             "declared exact, its outputs compute tanh"]
    recorded = _verdict(_result(fingerprint=_print("tanh")), fingerprint="tanh")
    assert recorded.worse == ["declared exact, its outputs compute tanh"]
    explained = _verdict(_result(fingerprint=_print("tanh")), fingerprint="tanh",
                         defects=["form"])
    assert explained.worse == [] and explained.defects == ["form"]
    every_part = _verdict(_result(fingerprint=_print("tanh")), fingerprint="tanh",
                          defects=["tail"])  # a defect that names no part explains all
    assert every_part.worse == [] and every_part.defects == ["tail"]
    unexplained = _verdict(_result(fingerprint=_print("tanh")), fingerprint="tanh",
                           defects=["ulp-only"])
    assert unexplained.worse == ["declared exact, its outputs compute tanh"]
    assert _verdict(_result(fingerprint=_print("tanh"))).worse == []  # none recorded
    undeclared = _verdict(_result(fingerprint=_print("tanh", None)), fingerprint="tanh")
    assert undeclared.worse == []


def _specials(**wrong):
    labels = ["+inf", "-inf", "nan"]
    return {k: SpecialOutcome(0.0, 0.0, 0.0, not wrong.get(k.replace("+", "p")
                                                           .replace("-", "m"), False))
            for k in labels}


def test_the_special_inputs():
    entry = {"specials_failing": ["-inf"]}
    assert _verdict(_result(specials=_specials(minf=True)), **entry).worse == []
    v = _verdict(_result(specials=_specials(minf=True, nan=True, pinf=True)), **entry)
    assert v.worse == ["special inputs now wrong: ['+inf', 'nan']"]
    v = _verdict(_result(specials=_specials()), **entry)
    assert v.better == ["special inputs now right: ['-inf']"] and v.worse == []
    assert _verdict(_result(specials=_specials(nan=True))).worse == []  # not recorded
    assert _verdict(_result(specials=Failure("x")), **entry).worse == []


# -- consistency ---------------------------------------------------------------------------

def _paths(*paths):
    r = ConsistencyResult(ID)
    r.paths = list(paths)
    return r


def test_consistency_counts_per_path_and_a_path_not_recorded_may_not_differ():
    b = _budgets(inconsistent={"one-element": 3}, defects=["tail", "paths", "ulp-only"])
    v = judge.judge_consistency(_paths(PathFigures("one-element", 10, n_differ=3),
                                       PathFigures("0-d", 10, n_differ=0)), b)
    assert v.worse == [] and v.better == [] and v.defects == ["tail", "paths"]
    v = judge.judge_consistency(_paths(PathFigures("one-element", 10, n_differ=4),
                                       PathFigures("0-d", 10, n_differ=1)), b)
    assert v.worse == [
        "outputs of path one-element that differ from the bulk result: 4 > 3",
        "outputs of path 0-d that differ from the bulk result: 1 > 0"]
    v = judge.judge_consistency(_paths(PathFigures("one-element", 10, n_differ=2)), b)
    assert v.better == ["outputs of path one-element that differ from the bulk result: 2 < 3"]
    assert v.failed  # better than a recorded defect


def test_consistency_failures_and_missing_entries():
    b = _budgets(inconsistent={})
    v = judge.judge_consistency(_paths(PathFigures("0-d", 1, error="ValueError: no"),
                                       PathFigures("one-element", 1, n_differ=1)), b)
    assert v.worse == ["path 0-d failed: ValueError: no", "outputs of path one-element that "
                       "differ from the bulk result: 1 > 0"]
    r = _paths()
    r.failure = Failure("boom")
    assert judge.judge_consistency(r, b).worse == ["could not be measured: boom"]
    assert judge.judge_consistency(_paths(), _budgets(max_ulp=1.0)).missing
    assert judge.judge_consistency(_paths(), Budgets(defects=DEFECTS)).missing
    assert not judge.judge_consistency(_paths(), b).missing


# -- sweeps --------------------------------------------------------------------------------

RANGE = ["0x00000000", "0x00010000"]


def _sweep(max_ulp=2.0, region=2.0, wrong=10, n=1000, failure=None, range_=RANGE):
    return built.sweep(None if failure else _figures(max_ulp, {"x<-5": region}, wrong, n),
                       of=ID, span=range_, failure=failure)


def _sweep_budgets(**recorded):
    base = {"range": RANGE, "max_ulp": 2.0, "regions": {"x<-5": 2.0},
            "correctly_rounded": 0.99}
    return _budgets(sweep={**base, **recorded}, defects=["tail"])


def test_a_sweep_within_its_record_holds():
    v = judge.judge_sweep(_sweep(), _sweep_budgets())
    assert v.worse == [] and v.better == [] and v.defects == ["tail"] and not v.missing


def test_a_sweep_worse_overall_in_a_region_or_in_correct_rounding():
    v = judge.judge_sweep(_sweep(max_ulp=3.0, region=3.0, wrong=11), _sweep_budgets())
    assert v.worse == [
        "max ulp over all float32 (worst x = -6.0, 0xc0c00000) 3 > 2",
        "max ulp in x<-5 (worst x = -6.0, 0xc0c00000) 3 > 2",
        "correctly rounded 98.900000% < 99.000000%"]


def test_a_sweep_better_in_correct_rounding_beyond_the_noise():
    """A share above the record by less than 1e-4 is noise (the record is floored to 1e-6)."""
    assert judge.judge_sweep(_sweep(wrong=995, n=100_000), _sweep_budgets()).better == []
    v = judge.judge_sweep(_sweep(wrong=989, n=100_000), _sweep_budgets())
    assert v.better == ["correctly rounded 99.011000% > 99.000000%"] and v.worse == []


def test_a_sweep_share_exactly_at_the_noise_bound_is_not_better():
    """0.9901 is exactly the record 0.99 plus 1e-4 in float64: not beyond it."""
    v = judge.judge_sweep(_sweep(wrong=99, n=10_000), _sweep_budgets())
    assert 1 - 99 / 10_000 == 0.99 + 1e-4 and v.better == []


def test_a_sweep_record_with_no_regions_nor_defects():
    b = _budgets(sweep={"range": RANGE, "max_ulp": 2.0, "correctly_rounded": 0.99})
    v = judge.judge_sweep(_sweep(region=50.0), b)
    assert v.worse == [] and v.defects == []


def test_a_sweep_over_another_range_or_unrecorded_is_missing():
    assert judge.judge_sweep(_sweep(range_=["0x0", "0x10"]), _sweep_budgets()).missing
    assert judge.judge_sweep(_sweep(), _budgets(max_ulp=1.0)).missing
    assert judge.judge_sweep(_sweep(), Budgets(defects=DEFECTS)).missing
    v = judge.judge_sweep(_sweep(failure=Failure("died")), _sweep_budgets())
    assert v.worse == ["could not be measured: died"]


def test_the_sweep_line_is_said_where_the_sweep_is_worse_better_or_unrecorded():
    s = _sweep()
    assert judge.sweep_line(s, _sweep_budgets()) == (False, None)
    failed, line = judge.sweep_line(_sweep(max_ulp=3.0), _sweep_budgets())
    assert failed and line == (f"{s.label}: worse than budget: max ulp over all float32 "
                               "(worst x = -6.0, 0xc0c00000) 3 > 2")
    better = _budgets(sweep={"range": RANGE, "max_ulp": 2.0, "correctly_rounded": 0.98})
    failed, line = judge.sweep_line(_sweep(), better)
    assert not failed and line == (f"{s.label}: better than budget, can be tightened: "
                                   "correctly rounded 99.000000% > 98.000000%")
    assert judge.sweep_line(_sweep(range_=["0x0", "0x10"]), _sweep_budgets()) == (
        False, f"{s.label}: no sweep budget over [0x0, 0x10); record one with gelucheck "
               "sweep --write-budgets")


# -- a sweep or search with no budget at all: held to the stated default -------------------

USER = Identity("user", "mymod:gelu", "gelu", "float32")


@pytest.mark.parametrize(("max_ulp", "default", "failed"), [
    (0.4, 0.5, False), (0.5, 0.5, False), (0.5000001, 0.5, True), (3.0, 0.5, True),
    (3.0, 4.0, False)])
def test_a_sweep_with_no_budget_is_held_to_the_default(max_ulp, default, failed):
    s = built.sweep(_figures(max_ulp, {"x<-5": max_ulp}), of=USER, span=RANGE)
    budgets = Budgets(defects=DEFECTS, default_max_ulp=default)
    got, line = judge.sweep_line(s, budgets)
    assert got is failed
    held = f"{s.label}: no budget recorded, so held to the default max ulp {default:g}: "
    found = f"{max_ulp:.4g} (x = -6.0, 0xc0c00000)"
    assert line.startswith(held + (f"{found} > {default:g}" if failed else
                                   f"{found}, within it"))
    assert line.endswith("record its budget with gelucheck budgets --write FILE, then its "
                         "sweep with --write-budgets FILE")


def test_a_sweep_or_search_with_no_budget_that_failed_fails():
    s = built.sweep(None, of=USER, span=RANGE, failure=Failure("died"))
    assert judge.sweep_line(s, Budgets()) == (
        True, f"{s.label}: no budget recorded, so held to the default max ulp 0.5: could not "
              "be measured: died")


def test_a_search_with_no_budget_is_held_to_the_default_as_a_lower_bound():
    of = Identity("user", "mymod:erf", "erf", "float64")
    failed, line = judge.search_line(built.search(1.25, of=of), Budgets())
    assert failed and "no budget recorded, so held to the default max ulp 0.5: at least 1.25" \
        " (x = -0.055078512738165414, -0x1.c334035d8715cp-5) > 0.5; record its budget" in line
    assert line.endswith("then its search with --write-budgets FILE")
    assert judge.search_line(built.search(0.25, of=of), Budgets())[0] is False


def test_an_implementation_recorded_without_a_sweep_is_told_to_record_one():
    """Its entry exists (a backend's shipped figures on samples): no comparable sweep is
    said, not gated, and not held to the default (its sample budget is its own)."""
    failed, line = judge.sweep_line(_sweep(max_ulp=3.0), _budgets(max_ulp=1.0))
    assert not failed and "no sweep budget over" in line


# -- results the function cannot have -----------------------------------------------------

def test_impossible_results_are_counted_against_the_budget_where_measured():
    from dataclasses import replace

    three = _result(figures=replace(_figures(), impossible=3))
    assert _verdict(three, max_ulp=10.0).worse == [
        "results outside the range or of the wrong sign: 3 > 0"]
    v = _verdict(three, max_ulp=10.0, impossible=5)
    assert v.better == ["results outside the range or of the wrong sign: 3 < 5"]
    assert v.worse == []
    unmeasured = _result(figures=replace(_figures(), impossible=None))
    assert _verdict(unmeasured, max_ulp=10.0, impossible=5).better == []


# -- no budget: the stated default ---------------------------------------------------------

def test_the_default_holds_a_correctly_rounded_result():
    good = _result(figures=_figures(0.5, regions={}), specials={
        "+inf": SpecialOutcome(math.inf, math.inf, math.inf, True)},
        minimum=_minimum(0.5, True), sign=_sign(0, 0), fingerprint=_print("exact"))
    v = judge.judge_default(good)
    assert v.worse == [] and not v.failed and judge.DEFAULT_MAX_ULP == 0.5


def test_the_default_names_each_way_a_result_misses_it():
    bad = _result(figures=_figures(0.5, regions={}, not_correctly_rounded=2), specials={
        "-inf": SpecialOutcome(-math.inf, -0.0, math.nan, False)},
        minimum=_minimum(0.7, False), sign=_sign(1, 2, False), fingerprint=_print("tanh"))
    assert judge.judge_default(bad).worse == [
        "2 results not correctly rounded (a tie rounded the wrong way, or a hair past one: "
        "each scores 0.5 ulp)",
        "special input -inf: expected -0.0, computed nan",
        "ulp error of the minimum value 0.7 > 0.5",
        "x* is not on the plateau of smallest outputs",
        "1 results of the wrong sign, 2 falsely zero",
        "the computed derivative does not change sign at x*",
        "declared exact, its outputs compute tanh"]


def test_a_looser_default_allows_its_ulps_and_a_plateau_elsewhere():
    r = _result(figures=_figures(3.0, regions={}, not_correctly_rounded=40),
                minimum=_minimum(2.9, False))
    assert judge.judge_default(r, 3.0).worse == []
    near = _result(figures=_figures(1.0, regions={}), minimum=_minimum(0.9, False))
    assert judge.judge_default(near, 1.0).worse == []  # above 0.5 the plateau may move
    one_each = _result(sign=_sign(1, 1))
    assert judge.judge_default(one_each).worse == ["1 results of the wrong sign, 1 falsely zero"]
    worse = judge.judge_default(r, 2.0).worse
    assert worse[0].startswith("max ulp 3 > 2; worst x = -6.0 (0xc0c00000)")
    assert worse[1] == "ulp error of the minimum value 2.9 > 2"
    failed = _result(failure=Failure("boom"))
    assert judge.judge_default(failed).worse == ["could not be measured: boom"]

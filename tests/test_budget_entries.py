"""What a budget entry records of each kind of result, how a budgets file is read and
checked, and which entries are stale: field by field, with figures derived by hand."""
import math
from types import SimpleNamespace

import pytest

import built_results as built
from gelucheck import budgets
from gelucheck.errors import UsageError
from gelucheck.results import (
    ConsistencyResult,
    Failure,
    Fingerprint,
    Identity,
    MinimumFinding,
    PathFigures,
    Region,
    SignFinding,
    SpecialOutcome,
    SweepResult,
)


def _figures(max_ulp, region_ulp=None, impossible=0, n_inputs=8, not_cr=3):
    return built.figures(
        max_ulp, [Region("x<-5", -math.inf, -5.0, 4, max_ulp if region_ulp is None
                         else region_ulp, 0.5, -6.5, "0xc0d00000"),
                  Region("|x|<=5", -5.0, 5.0, 4, 0.25, 0.125, 1.0, "0x3f800000")],
        n_inputs=n_inputs, mean_ulp=0.25, not_correctly_rounded=not_cr,
        worst=(-6.5, "0xc0d00000"), computed=-1.25, exact=-1.5, max_abs_error=0.25,
        impossible=impossible)


def _result(figures, **parts):
    return built.accuracy(figures, **parts)


# --- round_up -----------------------------------------------------------------------------

@pytest.mark.parametrize("value, digits, expected", [
    (2.0436, 3, 2.05),  # up at the third significant digit
    (2.0436, 2, 2.1),
    (2.0436, 4, 2.044),
    (123456.0, 3, 124000.0),
    (0.000123456, 3, 0.000124),
    (0.5, 3, 0.5),  # already 3 digits: kept
    (16.0, 3, 16.0),
    (-2.0436, 3, -2.04),  # up is towards +inf: -204.36 ulps of 0.01 up to -204
])
def test_round_up_to_the_digits_asked(value, digits, expected):
    assert budgets.round_up(value, digits) == expected


@pytest.mark.parametrize("value", [0.0, math.inf, -math.inf])
def test_round_up_keeps_zero_and_infinities(value):
    assert budgets.round_up(value) == value


def test_round_up_of_nan_is_nan_never_a_number():
    assert math.isnan(budgets.round_up(math.nan))


def test_round_up_never_rounds_below_where_the_division_would():
    """13.100000000000001 (13.1's successor) times 10 rounds to 131 exactly, and 131/10 is
    13.1, below the value: the budget would not hold its own measurement."""
    value = math.nextafter(13.1, math.inf)
    assert math.ceil(value * 10) / 10 < value  # the trap, derived by hand above
    assert budgets.round_up(value) == value


# --- the figures a budgets file may hold --------------------------------------------------

def _load_text(tmp_path, text):
    path = tmp_path / "b.toml"
    path.write_text(text)
    return budgets.load(path), path


@pytest.mark.parametrize("figure, shown", [
    ("max_ulp = nan", "max_ulp = nan"),
    ("max_ulp = true", "max_ulp = True"),
    ('max_ulp = "1"', "max_ulp = '1'"),
    ('max_ulp = 1.0\nregions = { "x<-5" = nan }', "regions.x<-5 = nan"),
    ("max_ulp = 1.0\nminimum_value_ulp = nan", "minimum_value_ulp = nan"),
    ("regions = {}", "max_ulp = None"),  # no max_ulp at all
    ("max_ulp = -2.0", "max_ulp = -2.0"),  # a negative budget fails every result
    ('max_ulp = 1.0\nregions = { "x<-5" = -1 }', "regions.x<-5 = -1"),
    ('max_ulp = 1.0\nsweep = { max_ulp = nan }', "sweep.max_ulp = nan"),
    ('max_ulp = 1.0\nsearch = { max_ulp = -1.0 }', "search.max_ulp = -1.0"),
    ('max_ulp = 1.0\nsweep = { max_ulp = 1.0, regions = { "x>=5" = "2" } }',
     "sweep.regions.x>=5 = '2'"),
])
def test_a_budget_that_is_not_a_number_is_refused_with_the_file_and_entry(tmp_path, figure,
                                                                           shown):
    with pytest.raises(UsageError) as err:
        _load_text(tmp_path, f'["a:b".gelu.float32]\n{figure}\n')
    message = str(err.value)
    assert str(tmp_path / "b.toml") in message and "('a:b', 'gelu', 'float32')" in message
    assert shown in message
    assert message.endswith("; a budget is a number of ulps, 0 or more (inf allowed, NaN not)")


@pytest.mark.parametrize("figure, where", [
    ('max_ulp = 1.0\nregions = { "x<-7" = 1.0 }', "regions names ['x<-7']"),
    ('max_ulp = 1.0\nsweep = { max_ulp = 1.0, regions = { "x>5" = 1.0 } }',
     "sweep.regions names ['x>5']"),
])
def test_a_budget_for_a_region_that_does_not_exist_is_refused(tmp_path, figure, where):
    """It would never apply: the result it was meant for would be held to the rest."""
    with pytest.raises(UsageError) as err:
        _load_text(tmp_path, f'["a:b".gelu.float32]\n{figure}\n')
    message = str(err.value)
    assert str(tmp_path / "b.toml") in message and where in message
    assert "valid choices: x<-5, -5<=x<-1, -1<=x<0, 0<=x<1, 1<=x<5, x>=5" in message


def test_integer_and_infinite_budgets_are_numbers(tmp_path):
    loaded, _ = _load_text(tmp_path, '["a:b".gelu.float32]\nmax_ulp = 3\nminimum_value_ulp = inf'
                           '\nregions = { "x<-5" = inf }\n')
    assert loaded.entries[("a:b", "gelu", "float32")]["max_ulp"] == 3


def test_unreadable_and_damaged_budget_files_are_refused_by_name(tmp_path):
    missing = tmp_path / "none.toml"
    with pytest.raises(UsageError, match=r"none\.toml: cannot be read \(No such file"):
        budgets.load(missing)
    with pytest.raises(UsageError, match=r"b\.toml: not valid TOML"):
        _load_text(tmp_path, '["a:b".gelu.float32\nmax_ulp = 1\n')


def test_an_undefined_defect_is_refused_naming_the_defined_ones(tmp_path):
    with pytest.raises(UsageError) as err:
        _load_text(tmp_path, '[defects.tail]\nreason = "r"\n[defects.flush]\nreason = "s"\n'
                   '["a:b".gelu.float32]\nmax_ulp = 1.0\ndefects = ["tail", "nope"]\n')
    assert "names undefined defects ['nope']; defined: tail, flush" in str(err.value)


def test_load_reads_every_level_and_keeps_the_defects_apart(tmp_path):
    loaded, _ = _load_text(tmp_path, '[defects.tail]\nreason = "r"\n'
                           '["a:b".gelu.float32]\nmax_ulp = 1.0\n'
                           '["a:b".phi.float16]\nmax_ulp = 2.0\n'
                           '["c:d".gelu.float32]\nmax_ulp = 3.0\n')
    assert loaded.defects == {"tail": {"reason": "r"}}
    assert {k: e["max_ulp"] for k, e in loaded.entries.items()} == {
        ("a:b", "gelu", "float32"): 1.0, ("a:b", "phi", "float16"): 2.0,
        ("c:d", "gelu", "float32"): 3.0}
    assert loaded.default_max_ulp == 0.5 == budgets.DEFAULT_MAX_ULP
    assert loaded.get(_result(_figures(1.0))) is None  # be:impl has no entry
    loaded.entries[("be:impl", "gelu", "float32")] = {"max_ulp": 9.0}
    assert loaded.get(_result(_figures(1.0))) == {"max_ulp": 9.0}


# --- stale entries ------------------------------------------------------------------------

def _impl(impl_id, function, *dtypes):
    return SimpleNamespace(id=impl_id, backend=impl_id.partition(":")[0],
                           function=SimpleNamespace(name=function),
                           dtypes=[SimpleNamespace(name=d) for d in dtypes])


def test_stale_entries_name_what_no_available_backend_offers():
    b = budgets.Budgets()
    for k in [("numpy:gelu", "gelu", "float32"),   # offered: kept
              ("numpy:gelu", "gelu", "float16"),   # numpy is here but offers no float16 one
              ("numpy:gelu", "phi", "float32"),    # nor this function
              ("numpy:glu", "gelu", "float32"),    # a misspelt implementation
              ("nunpy:gelu", "gelu", "float32"),   # a misspelt backend
              ("jax:gelu", "gelu", "float32"),     # known, not installed here: kept
              ("user:mygelu:fast", "gelu", "float32")]:  # a user's callable, not measured:
        # kept (its id holds two colons: the backend is what comes before the first)
        b.entries[k] = {"max_ulp": 1.0}
    offered = [_impl("numpy:gelu", "gelu", "float32", "float64")]
    assert budgets.stale_entries(b, offered, ["numpy", "jax"]) == [
        "[numpy:gelu.gelu.float16]", "[numpy:gelu.phi.float32]", "[numpy:glu.gelu.float32]",
        "[nunpy:gelu.gelu.float32]"]


def test_stale_warnings_name_the_file_and_the_entry():
    b = budgets.Budgets(entries={("nunpy:gelu", "gelu", "float32"): {"max_ulp": 1.0}})
    assert budgets.stale_warnings(b, "my.toml") == [
        "my.toml: [nunpy:gelu.gelu.float32] names no implementation here; misspelt or "
        "removed?"]


# --- what an entry records ----------------------------------------------------------------

def test_an_entry_records_figures_rounded_up_and_nothing_unmeasured():
    entry = budgets.entry_from(_result(_figures(2.0436, region_ulp=1.00001)), None)
    assert entry == {"max_ulp": 2.05, "regions": {"x<-5": 1.01, "|x|<=5": 0.25}}


@pytest.mark.parametrize("max_ulp, recorded", [(0.5, True), (0.25, True), (0.5001, False),
                                               (0.50001, False)])
def test_the_count_not_correctly_rounded_is_recorded_within_half_an_ulp(max_ulp, recorded):
    entry = budgets.entry_from(_result(_figures(max_ulp)), None)
    assert ("not_correctly_rounded" in entry) is recorded
    if recorded:
        assert entry["not_correctly_rounded"] == 3


def test_impossible_results_are_recorded_only_when_there_are_some():
    assert "impossible" not in budgets.entry_from(_result(_figures(1.0)), None)
    assert budgets.entry_from(_result(_figures(1.0, impossible=4)), None)["impossible"] == 4


def test_the_minimum_specials_sign_and_fingerprint_are_recorded_when_measured():
    minimum = MinimumFinding(-0.75, -0.75, -0.76, -0.74, 3, True, 1, [-0.8, -0.7], -0.17,
                             -0.17, False, 1.00001)
    specials = {"+inf": SpecialOutcome(math.inf, math.inf, math.nan, False),
                "-0": SpecialOutcome(-0.0, -0.0, -0.0, True),
                "-inf": SpecialOutcome(-math.inf, -0.0, math.nan, False)}
    sign = SignFinding(n_wrong_sign=2, n_false_zero=5, examples=[], x_star=-0.75,
                       crossing_lo=None, crossing_hi=None, sign_changes=1,
                       x_star_in_crossing=False)
    fingerprint = Fingerprint("tanh", "erf", 100, 50.0, {})
    entry = budgets.entry_from(_result(_figures(1.0), minimum=minimum, specials=specials,
                                       sign=sign, fingerprint=fingerprint), None)
    assert entry["minimum_value_ulp"] == 1.01 and entry["true_argmin_on_plateau"] is False
    assert entry["specials_failing"] == ["+inf", "-inf"]  # sorted
    assert entry["wrong_sign"] == 7 and entry["x_star_in_crossing"] is False
    assert entry["fingerprint"] == "tanh"


def test_failed_parts_are_not_recorded_as_figures():
    failed = Failure("boom")
    entry = budgets.entry_from(_result(_figures(1.0), minimum=failed, specials=failed,
                                       sign=failed), None)
    assert set(entry) == {"max_ulp", "regions"}


def test_an_entry_keeps_what_other_commands_measured_and_the_people_wrote():
    old = {"max_ulp": 99.0, "inconsistent": {"strided": 3}, "sweep": {"max_ulp": 4.0},
           "defects": ["tail"], "evidence": "old", "stray": 1}
    entry = budgets.entry_from(_result(_figures(2.0)), old)
    assert entry["max_ulp"] == 2.0 and "stray" not in entry
    assert entry["inconsistent"] == {"strided": 3} and entry["sweep"] == {"max_ulp": 4.0}
    assert entry["defects"] == ["tail"]
    assert entry["evidence"] == ("worst x = -6.5 (0xc0d00000): computed -1.25, exact -1.5")


def test_no_evidence_without_a_defect_to_explain():
    assert "evidence" not in budgets.entry_from(_result(_figures(2.0)), {"defects": []})
    assert "defects" not in budgets.entry_from(_result(_figures(2.0)), {"defects": []})


def test_a_sweep_entry_rounds_the_share_down():
    """1 - 1000/2^32 = 0.99999976716...: recorded 0.999999, never above the measurement."""
    result = SweepResult(Identity("libm", "erff", "erf", "float32"), "erf", "native",
                         ["0x00000000", "0xffffffff"], 0,
                         figures=_figures(0.50001, n_inputs=2**32, not_cr=1000))
    assert budgets.sweep_entry(result) == {
        "range": ["0x00000000", "0xffffffff"], "max_ulp": 0.501,
        "regions": {"x<-5": 0.501, "|x|<=5": 0.25}, "correctly_rounded": 0.999999}


def test_a_consistency_entry_holds_only_the_paths_that_differ():
    result = ConsistencyResult(Identity("torch", "gelu", "gelu", "float32"),
                               paths=[PathFigures("strided", 100, n_differ=0),
                                      PathFigures("odd-inner", 100, n_differ=3),
                                      PathFigures("broadcast", 100, n_differ=1)])
    assert budgets.consistency_entry(result) == {"odd-inner": 3, "broadcast": 1}


# --- writing ------------------------------------------------------------------------------

def test_a_new_file_starts_with_the_header_and_holds_inline_regions(tmp_path):
    path = tmp_path / "new.toml"
    b = budgets.Budgets(defects={"tail": {"reason": "r", "affects": ["ulp"]}})
    b.entries[("a:b", "gelu", "float32")] = {"max_ulp": 1.0, "regions": {"x<-5": 1.0}}
    budgets.write(path, b, header="# first line\n#second line")
    text = path.read_text()
    assert text.startswith("# first line\n# second line\n")
    assert 'regions = {"x<-5" = 1.0}' in text
    # one header per entry, none for the implementation or the function alone
    assert '["a:b".gelu.float32]' in text
    assert '["a:b"]' not in text and '["a:b".gelu]' not in text
    assert budgets.load(path).entries == b.entries


def test_rewriting_drops_what_the_new_entry_no_longer_holds_and_keeps_a_defect(tmp_path):
    path = tmp_path / "b.toml"
    path.write_text('[defects.tail]\nreason = "written by a person"\n'
                    '["a:b".gelu.float32]\nmax_ulp = 1.0\nwrong_sign = 3\n')
    b = budgets.Budgets(defects={"tail": {"reason": "another"}})
    b.entries[("a:b", "gelu", "float32")] = {"max_ulp": 2.0}
    budgets.write(path, b)
    again = budgets.load(path)
    assert again.entries[("a:b", "gelu", "float32")] == {"max_ulp": 2.0}
    assert again.defects["tail"]["reason"] == "written by a person"

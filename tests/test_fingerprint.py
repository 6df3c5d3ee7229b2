"""Formula fingerprints: planted outputs whose formula is known by construction - correctly
rounded values of each candidate from the stored reference, a fifth formula, noise - and a
user's function that computes the tanh form while declaring exact GELU."""
import json

import numpy as np
import pytest

from gelucheck.checks import fingerprint, reference_data
from gelucheck.cli import main
from gelucheck.formats import FORMATS, narrow
from gelucheck.functions import GELU, GELU_TANH
from gelucheck.results import Fingerprint

DTYPES = ["float16", "bfloat16", "float32"]  # every 16-bit input, and the float32 sample


def _sigmoid_form(tab, fmt, k):
    x = tab.x.astype(np.float64)
    with np.errstate(over="ignore"):
        return narrow(x / (1 + np.exp(-k * x)), fmt)


@pytest.mark.parametrize("dtype", DTYPES)
def test_correctly_rounded_exact_gelu_is_exact_by_the_whole_margin(dtype):
    fmt = FORMATS[dtype]
    tab = reference_data.table(fmt, "gelu")
    found = fingerprint.identify(tab, fmt, tab.rounded(GELU), "exact")
    assert (found.formula, found.margin, found.mismatch) == ("exact", 1.0, False)


@pytest.mark.parametrize("dtype", DTYPES)
def test_the_tanh_form_declared_as_exact_gelu_is_flagged(dtype):
    fmt = FORMATS[dtype]
    tab = reference_data.table(fmt, "gelu")
    found = fingerprint.identify(tab, fmt, tab.rounded(GELU_TANH), "exact")
    assert found.formula == "tanh" and found.mismatch and found.margin == 1.0


@pytest.mark.parametrize("k, name", [(1.702, "sigmoid_1.702"), (1.773, "sigmoid_1.773")])
def test_each_sigmoid_constant_is_told_apart(k, name):
    fmt = FORMATS["float32"]
    tab = reference_data.table(fmt, "gelu")
    found = fingerprint.identify(tab, fmt, _sigmoid_form(tab, fmt, k), "exact")
    assert found.formula == name and found.mismatch


def test_a_fifth_formula_is_none_of_these():
    """x·σ(1.5x) is nearest to x·σ(1.702x) but far from it: not named after it."""
    fmt = FORMATS["float32"]
    tab = reference_data.table(fmt, "gelu")
    found = fingerprint.identify(tab, fmt, _sigmoid_form(tab, fmt, 1.5), "sigmoid_1.702")
    assert found.formula == "none of these" and found.mismatch


def test_a_rough_exact_gelu_is_still_exact():
    """Exact GELU in float16 with every output moved by up to 2 ulps at random: where exact
    and tanh differ (by an ulp) the noise often lands on tanh's value, yet exact wins."""
    fmt = FORMATS["float16"]
    tab = reference_data.table(fmt, "gelu")
    bits = tab.rounded(GELU).view(np.int16)
    noisy = (bits + np.random.default_rng(0).integers(-2, 3, bits.size).astype(np.int16))
    found = fingerprint.identify(tab, fmt, noisy.view(np.float16), "exact")
    assert found.formula == "exact" and not found.mismatch
    assert fingerprint.MARGIN <= found.margin < 1


def test_outputs_half_of_one_form_half_of_the_other_are_undecided():
    fmt = FORMATS["float32"]
    tab = reference_data.table(fmt, "gelu")
    half = np.arange(len(tab.x)) % 2 == 0
    mixed = np.where(half, tab.rounded(GELU), tab.rounded(GELU_TANH))
    found = fingerprint.identify(tab, fmt, mixed, "exact")
    assert found.formula == "undecided" and not found.mismatch and abs(found.margin) < 0.1


def test_check_flags_a_user_function_that_computes_the_other_form(tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(["check", "--impl", "tests.user_impls:tanh_form_posing_as_gelu",
                 "--function", "gelu", "--dtype", "float32", "--json", str(out),
                 "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "FINGERPRINT MISMATCH" in printed and "declared exact, its outputs compute tanh" \
        in printed
    (result,) = json.loads(out.read_text())["results"]
    assert result["fingerprint"]["formula"] == "tanh" and result["fingerprint"]["mismatch"]


def test_check_does_not_flag_a_faithful_exact_gelu(tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(["check", "--impl", "tests.user_impls:gelu_float64_then_round",
                 "--function", "gelu", "--dtype", "float16", "--json", str(out),
                 "--no-progress"]) == 0
    assert "FINGERPRINT MISMATCH" not in capsys.readouterr().out
    (result,) = json.loads(out.read_text())["results"]
    assert result["fingerprint"]["formula"] == "exact"
    assert not result["fingerprint"]["mismatch"]


def test_a_saved_fingerprint_reads_back_the_same(tmp_path):
    from gelucheck.report import jsonio

    out = tmp_path / "r.json"
    assert main(["check", "--impl", "tests.user_impls:tanh_form_posing_as_gelu",
                 "--function", "gelu", "--dtype", "float16", "--json", str(out),
                 "--no-progress"]) == 0
    (result,) = jsonio.read(out)
    assert result.fingerprint.formula == "tanh" and result.fingerprint.mismatch
    assert result.fingerprint.candidates["exact"]["preferred_over_winner"] == 0.0


def test_compare_reports_a_kernel_that_changed_its_formula(tmp_path, capsys):
    """Two reports of the same implementation: the new one computes the tanh form."""
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    assert main(["check", "--impl", "tests.user_impls:gelu_float64_then_round", "--function",
                 "gelu", "--dtype", "float16", "--json", str(old), "--no-progress"]) == 0
    assert main(["check", "--impl", "tests.user_impls:tanh_form_posing_as_gelu", "--function",
                 "gelu", "--dtype", "float16", "--json", str(new), "--no-progress"]) == 0
    text = new.read_text().replace("tanh_form_posing_as_gelu", "gelu_float64_then_round")
    new.write_text(text)  # the same implementation's name, another release's outputs
    capsys.readouterr()
    assert main(["compare", str(old), str(new), "--fail-on-regression"]) == 1
    assert "computes exact -> tanh (declared exact)" in capsys.readouterr().out


# The vote at its edges, over a table built by hand (in float16: ulps of 2^-10 in [1, 2))

class _Table:
    """What identify reads of a stored table: the inputs and the rounded values of exact GELU
    and of the tanh form (the sigmoid forms it computes from the inputs)."""

    def __init__(self, x, exact, tanh):
        self.x = np.asarray(x, np.float16)
        self._rounded = {GELU: np.asarray(exact, np.float16),
                         GELU_TANH: np.asarray(tanh, np.float16)}

    def rounded(self, function):
        return self._rounded[function]

    def derived(self, key, compute):  # a stored table keeps it; nothing to keep here
        return compute()


F16, U = FORMATS["float16"], 2.0**-10
X = [0.25, 0.3]  # where the sigmoid forms (0.15, 0.19) are far from the values below


def _vote(out, exact=(1.5, 1.5), tanh=(1.5 + 8 * U, 1.5 + 8 * U), x=X):
    tab = _Table(x, exact, tanh)
    return fingerprint.identify(tab, F16, np.asarray(out, np.float16), "exact")


def test_no_finite_output_in_the_window_is_none_of_these_with_nothing_counted():
    found = fingerprint.identify(_Table(X, (1.5, 1.5), (1.5, 1.5)), F16,
                                 np.full(2, np.nan, np.float16), "exact")
    assert found == Fingerprint("none of these", "exact", 0, 0.0, {})


def test_the_window_holds_both_its_edges_and_no_input_with_a_non_finite_candidate():
    x = [1 / 16, 5.0, 0.5, 6.0, 1 / 32]
    found = _vote([1.5] * 5, exact=[1.5] * 5, tanh=[1.5 + 8 * U] * 5, x=x)
    assert found.n_inputs == 3
    found = _vote([1.5] * 3, exact=[1.5] * 3, tanh=[1.5 + 8 * U, np.nan, 1.5 + 8 * U],
                  x=[0.25, 0.3, 0.35])
    assert found.n_inputs == 2


def test_two_forms_that_agree_on_every_input_are_not_told_apart():
    assert _vote([1.5, 1.5], tanh=(1.5, 1.5)).formula == "undecided"


def test_a_tie_counts_half_a_vote():
    found = _vote([1.5, 1.5 + 4 * U])  # the first for exact; the second halfway
    assert (found.formula, found.margin) == ("exact", 0.5)


def test_outputs_equally_near_two_forms_are_undecided_up_to_4_ulps_away():
    assert _vote([1.5 + 4 * U] * 2).formula == "undecided"  # 4 ulps from each
    found = _vote([1.5 + 20 * U] * 2, tanh=(1.5 + 40 * U,) * 2)  # 20 from each: neither
    assert found.formula == "none of these"


def test_outputs_far_from_every_form_but_at_one_input_are_none_of_these():
    x = [0.25, 0.3, 0.35]
    found = _vote([1.5 + 20 * U, 1.5 + 20 * U, 1.5], exact=[1.5] * 3,
                  tanh=[1.5 + 40 * U] * 3, x=x)
    assert found.formula == "none of these"


def test_the_winner_is_named_within_4_ulps_or_a_quarter_of_the_gap_to_its_rival():
    assert _vote([1.5 - 4 * U] * 2).formula == "exact"  # 4 ulps, though 4 > 8/4
    gap = (1.5 + 40 * U,) * 2
    assert _vote([1.5 - 10 * U] * 2, tanh=gap).formula == "exact"  # 10 ulps: a quarter
    assert _vote([1.5 - 11 * U] * 2, tanh=gap).formula == "none of these"
    assert _vote([1.5 - 20 * U] * 2, tanh=gap).formula == "none of these"


def test_each_candidate_says_how_often_it_is_met_how_near_and_how_often_preferred():
    fmt = FORMATS["float16"]
    tab = reference_data.table(fmt, "gelu")
    found = fingerprint.identify(tab, fmt, tab.rounded(GELU), "exact")
    assert found.candidates["exact"] == {"equal_share": 1.0, "median_ulp": 0.0,
                                         "preferred_over_winner": None}
    size = np.abs(tab.x.astype(np.float64))
    window = (size >= 1 / 16) & (size <= 5)
    same = tab.rounded(GELU_TANH)[window] == tab.rounded(GELU)[window]
    tanh = found.candidates["tanh"]
    assert tanh["equal_share"] == pytest.approx(float(np.mean(same)), abs=1e-12)
    assert 0.5 < tanh["equal_share"] < 1 and tanh["preferred_over_winner"] == 0.0
    assert tanh["median_ulp"] == 0.0  # equal on most inputs
    sigmoid = found.candidates["sigmoid_1.702"]
    assert sigmoid["median_ulp"] > 10 and sigmoid["preferred_over_winner"] == 0.0

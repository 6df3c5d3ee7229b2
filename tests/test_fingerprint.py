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

"""Budgets per kernel tier and per library release (budgets.Budgets, judge): an entry holds
for the tiers it was recorded on, a tier's own entry where its figures differ, a missing tier
is named with the nearest recorded one beside it, and a figure better than recorded fails as
a stale defect only on the release it was recorded with. Results and entries are built by
hand: the figures are given."""
import math
from dataclasses import replace

import pytest

import built_results as built
from gelucheck import budgets, judge
from gelucheck.budgets import Budgets
from gelucheck.errors import UsageError
from gelucheck.results import (
    AccuracyResult,
    ConsistencyResult,
    Identity,
    PathFigures,
    Region,
    SweepResult,
)

KEY = ("torch:F.gelu", "gelu", "float32")
DEFECTS = {"known": {"reason": "r", "affects": ["ulp"]}}


def _identity(tier: str | None, version: str | None = "2.13.0+cpu, MKL 2024.2") -> Identity:
    return Identity("torch", "F.gelu", "gelu", "float32", backend_version=version,
                    kernel_tier=tier)


def _result(max_ulp: float, tier: str | None = "avx2", **identity) -> AccuracyResult:
    figures = built.figures(max_ulp, [], n_inputs=10, worst=(-1.0, "0xbf800000"))
    return built.accuracy(figures, of=_identity(tier, **identity))


def _two_tiers() -> Budgets:
    """avx512_bf16 recorded first (2.7 ulps); avx2 differs (7.3 ulps)."""
    b = Budgets(defects=DEFECTS)
    b.record(_identity("avx512_bf16"), {"max_ulp": 2.7, "defects": ["known"]})
    b.record(_identity("avx2"), {"max_ulp": 7.3, "defects": ["known"]})
    return b


def test_each_tier_is_judged_against_its_own_figures():
    b = _two_tiers()
    assert b.lookup(_identity("avx2"))["max_ulp"] == 7.3
    assert b.lookup(_identity("avx512_bf16"))["max_ulp"] == 2.7
    assert not judge.judge(_result(7.3), b).failed  # 7.3 > 2.7: the other tier's would fail
    assert judge.judge(_result(7.3, "avx512_bf16"), b).worse


def test_a_tier_that_equals_the_first_keeps_no_entry_of_its_own():
    b = _two_tiers()
    b.record(_identity("avx512"), {"max_ulp": 2.7, "defects": ["known"]})
    assert "avx512" not in b.tiered or KEY not in b.tiered["avx512"]
    assert b.lookup(_identity("avx512"))["max_ulp"] == 2.7
    assert list(b.tiers("torch")) == ["avx512_bf16", "avx2", "avx512"]


def test_when_the_first_tier_changes_the_others_keep_what_they_had():
    b = _two_tiers()
    b.record(_identity("avx512"), {"max_ulp": 2.7, "defects": ["known"]})  # shared
    b.record(_identity("avx512_bf16"), {"max_ulp": 1.1})
    assert b.lookup(_identity("avx512_bf16"))["max_ulp"] == 1.1
    assert b.lookup(_identity("avx512"))["max_ulp"] == 2.7  # measured there, kept
    assert b.lookup(_identity("avx2"))["max_ulp"] == 7.3


def test_consistency_and_sweep_figures_not_measured_are_not_a_difference():
    b = Budgets()
    b.record(_identity("avx512_bf16"), {"max_ulp": 2.7, "inconsistent": {"0-d": 3}})
    b.record(_identity("avx2"), {"max_ulp": 2.7})  # `report` does not measure paths
    assert not b.tiered.get("avx2")
    b.record(_identity("avx2"), {"max_ulp": 2.7, "inconsistent": {"0-d": 5}})
    assert b.tiered["avx2"][KEY]["inconsistent"] == {"0-d": 5}


def test_the_evidence_sentence_alone_is_not_a_difference():
    b = Budgets()
    b.record(_identity("avx2"), {"max_ulp": 2.7, "evidence": "worst x = -1.0"})
    b.record(_identity("avx512"), {"max_ulp": 2.7, "evidence": "worst x = -2.0"})
    assert not b.tiered.get("avx512")


def test_a_tier_never_recorded_is_named_with_the_nearest_recorded_one_beside_it():
    b = _two_tiers()
    verdict = judge.judge(_result(3.0, "avx512_fp16+mkl-native-intel"), b)
    assert verdict.failed and verdict.missing
    text = verdict.message()
    assert "no budget for kernel tier avx512_fp16+mkl-native-intel of torch" in text
    assert "recorded: avx512_bf16, avx2" in text
    assert ("nearest recorded tier, avx512_bf16: max ulp 3 measured, 2.7 recorded there; "
            "worse than budget: max ulp 3 > 2.7") in text
    assert "gelucheck budgets --write FILE --backend torch --kernel-tier native" in text
    assert "--gelucheck-kernel-tier avx512_bf16" in text


def test_a_backend_without_tiers_is_judged_on_any_tier():
    """Entries of a file written before tiers (no [recorded] tiers) hold on every tier."""
    b = Budgets(entries={KEY: {"max_ulp": 7.3}}, defects=DEFECTS)
    assert not judge.judge(_result(7.0, "avx512_fp16"), b).failed


def test_better_than_recorded_fails_as_a_stale_defect_only_on_the_recorded_release():
    b = _two_tiers()
    same = judge.judge(_result(1.0), b)
    assert same.failed and "yet recorded as known defect" in same.message()
    newer = judge.judge(_result(1.0, version="2.14.1+cpu, MKL 2025.0"), b)
    assert not newer.failed
    assert ("torch 2.14.1+cpu improves on the figure recorded with torch 2.13.0+cpu: max ulp 1 "
            "< 7.3") in newer.message()


def test_worse_than_recorded_fails_on_any_release():
    b = _two_tiers()
    assert judge.judge(_result(9.0, version="2.14.1+cpu"), b).failed


def test_the_release_is_the_version_line_up_to_its_first_comma_or_bracket():
    assert _identity(None, "2.13.0+cpu, MKL 2024.2, kernels avx2 (ATen avx2)").release == \
        "2.13.0+cpu"
    assert _identity(None, "glibc 2.36 (x86_64), numba 0.68.1").release == "glibc 2.36"
    assert _identity(None, None).release is None


def test_tiers_and_releases_survive_the_file(tmp_path):
    b = _two_tiers()
    b.record(Identity("scipy", "ndtr", "phi", "float64", backend_version="1.17.1"),
             {"max_ulp": 0.5, "not_correctly_rounded": 3})
    path = tmp_path / "budgets.toml"
    budgets.write(path, b)
    text = path.read_text()
    assert '[tier.avx2."torch:F.gelu".gelu.float32]' in text
    back = budgets.load(path)
    assert back.recorded == {"torch": {"tiers": {"avx512_bf16": "2.13.0+cpu",
                                                 "avx2": "2.13.0+cpu"}},
                             "scipy": {"release": "1.17.1"}}
    assert back.lookup(_identity("avx2"))["max_ulp"] == 7.3
    # the avx2 entry now equals the first tier's: rewritten, its own table goes
    back.record(_identity("avx2"), {"max_ulp": 2.7, "defects": ["known"]})
    budgets.write(path, back)
    assert "[tier." not in path.read_text()
    assert budgets.load(path).lookup(_identity("avx2"))["max_ulp"] == 2.7


def test_a_tier_entry_is_checked_as_any_other(tmp_path):
    path = tmp_path / "budgets.toml"
    path.write_text('[recorded.torch]\ntiers = {avx2 = "2.13.0"}\n'
                    '[tier.avx2."torch:F.gelu".gelu.float32]\nmax_ulp = nan\n')
    with pytest.raises(UsageError, match=r"tier avx2.*NaN not"):
        budgets.load(path)


def test_a_report_on_a_tier_never_recorded_says_which_and_fails_its_gate(tmp_path, capsys):
    """torch's results of this run carry its tier; a budgets file recorded on another tier
    only names the missing one once, with what to do, and the gate exits 1."""
    pytest.importorskip("torch", reason="torch is not installed")
    from gelucheck.backends import get_backend
    from gelucheck.cli import main

    running = get_backend("torch").tier.name
    other = "avx512" if running != "avx512" else "avx2"
    path = tmp_path / "budgets.toml"
    path.write_text(f'[recorded.torch]\ntiers = {{{other} = "2.13.0"}}\n'
                    '["torch:F.gelu".gelu.float16]\nmax_ulp = 3.0\n')
    assert main(["check", "--backend", "torch:F.gelu", "--function", "gelu", "--dtype",
                 "float16", "--no-progress", "--budgets", str(path)]) == 1
    out = capsys.readouterr().out
    line = f"no budget for kernel tier {running} of torch (recorded: {other})"
    assert f"{line}; beside the nearest recorded tier, {other}: max ulp" in out
    assert "gelucheck budgets --write FILE --backend torch --kernel-tier native" in out


def test_two_kernel_tiers_on_the_command_line_are_refused_before_any_work(capsys):
    from gelucheck.cli import main

    assert main(["check", "--backend", "scipy:ndtr", "--kernel-tier", "avx2", "--kernel-tier",
                 "native", "--no-progress"]) == 2
    assert "--kernel-tier is given as avx2 and native: give one" in capsys.readouterr().err


@pytest.mark.slow  # gelucheck report in a child process per tier: torch at two tiers
def test_budgets_records_each_tier_in_a_process_of_its_own(tmp_path):
    """`budgets --kernel-tier avx2 --kernel-tier avx512`: each tier measured with its caps
    set before torch loads; the second tier keeps only the entries whose figures differ -
    oneDNN's bfloat16 GELU, which only AVX-512 hands to oneDNN - and scipy, which has no
    tier, is recorded once with its release."""
    pytest.importorskip("torch", reason="torch is not installed")
    from gelucheck import tiers
    from gelucheck.cli import main

    if "avx512" not in tiers.reachable():
        pytest.skip("this CPU cannot run the avx512 tier")
    path = tmp_path / "budgets.toml"
    assert main(["budgets", "--write", str(path), "--backend", "torch", "--backend", "scipy",
                 "--kernel-tier", "avx2", "--kernel-tier", "avx512"]) == 0
    written = budgets.load(path)
    assert list(written.tiers("torch")) == ["avx2", "avx512"]
    import scipy

    assert written.recorded["scipy"] == {"release": scipy.__version__}  # no tiers
    bf16 = Identity("torch", "F.gelu", "gelu", "bfloat16")
    at = {t: written.lookup(bf16, t) for t in ("avx2", "avx512")}
    assert at["avx2"]["max_ulp"] < math.inf == at["avx512"]["max_ulp"]  # 2^127 overflows
    assert ("torch:F.gelu", "gelu", "bfloat16") in written.tiered["avx512"]
    float16 = Identity("torch", "F.gelu", "gelu", "float16")  # ATen's own kernel: the same
    assert ("torch:F.gelu", "gelu", "float16") not in written.tiered.get("avx512", {})
    assert written.lookup(float16, "avx512") == written.lookup(float16, "avx2")


def test_a_tier_recorded_again_equal_to_a_new_first_entry_keeps_no_entry_of_its_own():
    b = _two_tiers()
    b.record(_identity("avx512_bf16"), {"max_ulp": 7.3, "defects": ["known"]})
    assert KEY not in b.tiered["avx2"]  # avx2's 7.3 is now the first tier's
    assert b.lookup(_identity("avx2"))["max_ulp"] == 7.3


def test_a_case_first_recorded_on_another_tier_is_that_tier_s_alone():
    b = _two_tiers()
    other = Identity("torch", "erf", "erf", "float32", kernel_tier="avx2")
    b.record(other, {"max_ulp": 0.7})
    assert b.tiered["avx2"][other.key] == {"max_ulp": 0.7}
    assert b.lookup(other, "avx512_bf16") is None  # never measured on the first tier


def test_which_tier_is_missing():
    b = _two_tiers()
    assert b.missing_tier(_identity("avx512")) == "avx512"
    assert b.missing_tier(_identity("avx2")) is None
    assert b.missing_tier(_identity(None)) is None  # a result of no tier (an old report)
    untiered = Identity("scipy", "ndtr", "phi", "float64", kernel_tier="avx512")
    b.record(Identity("scipy", "ndtr", "phi", "float64"), {"max_ulp": 0.5})
    assert b.missing_tier(untiered) is None and b.lookup(untiered)["max_ulp"] == 0.5


def test_the_nearest_tier_shares_the_longest_start_not_the_largest_name():
    b = Budgets()
    b.record(_identity("avx512_bf16"), {"max_ulp": 1.0})
    b.record(_identity("avx2"), {"max_ulp": 2.0})
    assert b.nearest_tier("torch", "avx2+mkl-native-amd") == "avx2"
    assert b.nearest_tier("scipy", "avx2") is None  # nothing recorded per tier


def test_the_release_of_an_untiered_backend_and_a_tier_without_one():
    b = Budgets()
    b.record(Identity("scipy", "ndtr", "phi", "float64", backend_version="1.17.1"),
             {"max_ulp": 0.5})
    assert b.release(Identity("scipy", "ndtr", "phi", "float64")) == "1.17.1"
    b.record(_identity("avx2", version=None), {"max_ulp": 1.0})
    assert b.recorded["torch"]["tiers"] == {"avx2": ""}


def test_tiers_that_are_not_a_table_of_releases_are_refused(tmp_path):
    path = tmp_path / "budgets.toml"
    path.write_text('[recorded.torch]\ntiers = ["avx2"]\n')
    with pytest.raises(UsageError, match=r"\[recorded.torch\] tiers must map each tier to "
                       "the release it was recorded with"):
        budgets.load(path)


def test_a_tier_dropped_from_the_budgets_leaves_the_file(tmp_path):
    path = tmp_path / "budgets.toml"
    budgets.write(path, _two_tiers())
    back = budgets.load(path)
    del back.tiered["avx2"]
    budgets.write(path, back)
    assert "[tier." not in path.read_text()


def test_a_stale_tier_entry_is_named_with_its_tier():
    b = Budgets(defects=DEFECTS)
    b.record(_identity("avx512_bf16"), {"max_ulp": 2.7})
    b.record(Identity("torch", "gone", "gelu", "float32", kernel_tier="avx2"), {"max_ulp": 1.0})
    # (torch not known here: each of its entries is named, the tier's with its tier)
    assert budgets.stale_entries(b, [], []) == ["[torch:F.gelu.gelu.float32]",
                                                "[tier.avx2.torch:gone.gelu.float32]"]


def test_on_a_new_release_a_worse_figure_and_an_improvement_are_both_said():
    b = Budgets(defects=DEFECTS)
    b.record(_identity("avx2"), {"max_ulp": 7.3, "regions": {"x<-5": 1.0},
                                 "defects": ["known"]})
    result = _result(1.0, version="2.14.1+cpu")
    result.figures = replace(result.figures, regions=[
        Region("x<-5", -math.inf, -5.0, 1, 3.0, 1.0, -6.0, "0xc0c00000")])
    verdict = judge.judge(result, b)
    assert verdict.failed and "worse than budget: max ulp in x<-5 3 > 1" in verdict.message()
    assert "improves on the figure recorded with torch 2.13.0+cpu" in verdict.message()


def test_a_missing_tier_without_an_entry_anywhere_or_figures_still_names_the_tier():
    b = _two_tiers()
    nowhere = AccuracyResult(Identity("torch", "erf", "erf", "float32", kernel_tier="avx512"),
                             "erf", "native", "")
    text = judge.judge(nowhere, b).message()
    assert text.startswith("no budget for kernel tier avx512 of torch") and "beside" not in text
    minimum_only = AccuracyResult(_identity("avx512"), "gelu", "native", "")
    text = judge.judge(minimum_only, b).message()
    assert "beside the nearest recorded tier, avx512_bf16: within its budget; record" in text


def test_consistency_and_sweeps_better_on_a_new_release_are_notes_not_failures():
    b = Budgets(defects={"paths": {"reason": "r", "affects": ["consistency"]}})
    span = ["0x00000000", "0x100000000"]
    b.record(_identity(None), {"max_ulp": 1.0, "inconsistent": {"0-d": 5}, "defects": ["paths"],
                               "sweep": {"range": span, "max_ulp": 9.0, "regions": {},
                                         "correctly_rounded": 0.9}})
    newer = _identity(None, version="2.14.1+cpu")
    paths = ConsistencyResult(newer, paths=[PathFigures("0-d", 10, 0, 0.0)])
    assert not judge.judge_consistency(paths, b).failed
    assert judge.judge_consistency(replace(paths, identity=_identity(None)), b).failed
    sweep = SweepResult(newer, "gelu", "native", span, 0, figures=_result(1.0).figures)
    assert not judge.judge_sweep(sweep, b).failed
    assert judge.judge_sweep(replace(sweep, identity=_identity(None)), b).failed


def test_a_case_new_to_the_first_tier_holds_where_no_tier_says_otherwise():
    b = _two_tiers()
    new = Identity("torch", "erf", "erf", "float32", kernel_tier="avx512_bf16")
    b.record(new, {"max_ulp": 0.7})
    assert new.key not in b.tiered["avx2"]
    assert b.lookup(new, "avx2") == {"max_ulp": 0.7}

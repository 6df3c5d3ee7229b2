"""The make_moons study (gelucheck study moons), in a short version: 2 seeds, a few epochs.
Expected figures come from the data's definition, a hand derivation or mpmath's GELU(x*)."""
import json
import math
import sys

import numpy as np
import pytest

pytest.importorskip("sklearn", reason="the study needs scikit-learn: pip install "
                    "'gelucheck[study]'")
pytest.importorskip("torch", reason="the study needs torch: pip install 'gelucheck[torch]'")

from gelucheck.cli import main
from gelucheck.errors import UsageError
from gelucheck.study import output, runner, stats
from gelucheck.study.moons import Config, data

SHORT = Config(seeds=2, epochs=6)
GELU_AT_MINIMUM = -0.16997120747990366169  # mpmath, docs/design.md


@pytest.fixture(scope="module")
def study():
    return runner.run(SHORT, workers=1, progress=False)


def test_the_data_has_2000_balanced_points_and_a_disjoint_test_split():
    split = data(Config(), seed=3)
    parts = split.index
    assert sum(len(v) for v in parts.values()) == 2000
    assert len(np.unique(np.concatenate(list(parts.values())))) == 2000  # disjoint, complete
    assert not set(parts["test"]) & set(parts["train"])
    labels = np.concatenate([split.y_train, split.y_val, split.y_test])
    assert np.bincount(labels).tolist() == [1000, 1000]
    assert (len(split.x_train), len(split.x_val), len(split.x_test)) == (1200, 400, 400)


def test_a_trained_network_beats_the_majority_class_by_far(study):
    for record in study["seeds"]:
        majority = max(np.bincount(data(SHORT, record["seed"]).y_test)) / 400
        for activation, run in record["runs"].items():
            assert run["test_accuracy"] > majority + 0.25, (activation, run["test_accuracy"])


def test_swapping_an_activation_for_itself_changes_nothing(study):
    controls = [s for s in study["swaps"] if s["trained"] == s["evaluated"]
                and s["dtype"] == "float32"]
    assert len(controls) == len(SHORT.activations)
    for s in controls:
        assert s["flip_share_max"] == 0 and s["max_logit_change"] == 0
        assert s["accuracy_change"]["mean"] == 0


def test_swapping_relu_for_gelu_moves_a_unit_by_gelus_minimum(study):
    """relu(x) − gelu(x) = −gelu(−x): the largest per-input change is |GELU(x*)|, at ±x*."""
    row = next(s for s in study["swaps"] if s["label"] == "gelu -> relu")
    drift = row["activation_drift"]
    assert drift["range"][0] < -0.76 and drift["range"][1] > 0.76
    assert drift["max_abs"] == pytest.approx(-GELU_AT_MINIMUM, abs=2e-7)
    assert abs(drift["at"]) == pytest.approx(0.75179152469356445746, abs=1e-3)


def test_exact_and_tanh_gelu_differ_per_input_by_at_most_the_forms_gap(study):
    """mpmath: max over x of |GELU(x) − tanh form(x)| is 4.7324e-4, at |x| ≈ 2.699; the
    per-input column (float32 outputs) may exceed it by a few float32 ulps only."""
    row = next(s for s in study["swaps"] if s["label"] == "gelu -> gelu_tanh")
    assert 1e-5 < row["activation_drift"]["max_abs"] < 4.7324e-4 + 1e-6


@pytest.mark.slow
def test_two_runs_and_two_workers_give_the_same_bytes(study, tmp_path):
    again = runner.run(SHORT, workers=2, progress=False)
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    output.write_json(study, a)
    output.write_json(again, b)
    assert a.read_bytes() == b.read_bytes()


@pytest.mark.slow  # trains the study's networks: seconds
def test_the_command_writes_every_output(tmp_path, capsys):
    files = {k: tmp_path / n for k, n in (("json", "s.json"), ("markdown", "s.md"),
                                          ("html", "s.html"))}
    argv = ["study", "moons", "--seeds", "2", "--epochs", "2", "--workers", "1",
            "--no-progress", "--plots", str(tmp_path / "plots")]
    for k, path in files.items():
        argv += [f"--{k}", str(path)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "Paired differences" in printed and "gelu -> relu" in printed
    saved = json.loads(files["json"].read_text())
    assert saved["config"]["seeds"] == 2 and len(saved["seeds"]) == 2
    assert "| gelu - relu |" in files["markdown"].read_text()
    page = files["html"].read_text()
    assert "make_moons study" in page and page.count("<img") == 3
    assert len(list((tmp_path / "plots").glob("*.png"))) == 3
    # and the saved study goes into the accuracy report's page
    combined = tmp_path / "both.html"
    assert main(["html", "--study", str(files["json"]), "-o", str(combined)]) == 0
    assert "make_moons study" in combined.read_text()


@pytest.mark.parametrize("argv, message", [
    (["--seeds", "0"], "--seeds 0: need at least 1 seed"),
    (["--noise", "-0.1"], "--noise -0.1: need a standard deviation of 0 or more"),
    (["--activation", "swish"], "unknown activation 'swish'; valid choices: relu, gelu"),
    (["--epochs", "0"], "--epochs 0: need at least 1 epoch"),
    (["--workers", "0"], "--workers 0: need at least 1"),
    (["--lr", "-1"], "--lr -1.0: need a positive learning rate"),  # (Adam's traceback, later)
    (["--lr", "nan"], "--lr nan: need a positive learning rate"),
    (["--fine-tune-lr", "inf"], "--fine-tune-lr inf: need a positive learning rate"),
])
def test_bad_options_are_refused_before_any_training(argv, message, capsys):
    assert main(["study", "moons", *argv, "--no-progress"]) == 2
    assert message in capsys.readouterr().err


def test_a_missing_scikit_learn_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn", None)  # import sklearn now raises ImportError
    with pytest.raises(UsageError, match=r"pip install 'gelucheck\[study\]'"):
        runner.validate(SHORT)


def test_a_damaged_study_file_is_refused_with_its_name(tmp_path):
    bad = tmp_path / "broken.json"
    bad.write_text('{"kind": "study", "schema_')
    with pytest.raises(UsageError, match=r"broken\.json"):
        output.read(bad)
    bad.write_text('{"schema_version": 2, "results": []}')
    with pytest.raises(UsageError, match="not a gelucheck study file"):
        output.read(bad)


@pytest.mark.parametrize("damage, words", [
    (lambda s: s.update(summary="zzz"), "AttributeError"),
    (lambda s: s.pop("swaps"), "KeyError: 'swaps'"),
    (lambda s: s.update(seeds=[{"x": 1}]), "KeyError"),  # what the figures read
])
def test_a_study_file_with_a_mangled_field_is_refused_with_its_name(study, tmp_path, capsys,
                                                                    damage, words):
    """Not a traceback from deep in the tables or figures: the file named, before the page
    is written."""
    saved = tmp_path / "saved.json"
    output.write_json(study, saved)
    assert main(["html", "--study", str(saved), "-o", str(tmp_path / "ok.html")]) == 0
    damaged = json.loads(saved.read_text())
    damage(damaged)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(damaged))
    assert main(["html", "--study", str(bad), "-o", str(tmp_path / "bad.html")]) == 2
    err = capsys.readouterr().err
    assert f"{bad}: a study file that lacks or mangles a field ({words}" in err
    assert not (tmp_path / "bad.html").exists()


def test_summary_uses_students_t():
    s = stats.summary([1.0, 2.0, 3.0])
    # mean 2, sd 1, t(0.975, 2) = 4.302652729... (tables), half-width t·sd/√3
    assert (s["mean"], s["sd"]) == (2.0, 1.0)
    assert s["ci95"][1] - 2.0 == pytest.approx(4.3026527297 / math.sqrt(3), rel=1e-9)


def test_paired_wilcoxon_matches_the_exact_distribution():
    # five positive differences: the exact two-sided p is 2/2^5 (all signs +, or all -)
    p = stats.paired([2.0, 3.0, 4.0, 5.0, 6.0], [1.0, 1.0, 1.0, 1.0, 1.0])
    assert p["p_wilcoxon"] == pytest.approx(2 / 32)
    assert (p["wins"], p["ties"], p["losses"]) == (5, 0, 0)
    lower_loss = stats.paired([1.0, 2.0], [2.0, 2.0], higher_is_better=False)
    assert (lower_loss["wins"], lower_loss["ties"]) == (1, 1)
    assert stats.paired([1.0, 1.0], [1.0, 1.0])["p_wilcoxon"] is None

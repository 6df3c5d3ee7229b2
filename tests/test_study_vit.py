"""gelucheck study vit: a small ViT on load_digits, its activation swaps and the fine-tuning
after them; and the moons study's --fine-tune."""
import json

import numpy as np
import pytest

from gelucheck.cli import main
from gelucheck.errors import UsageError
from gelucheck.study import finetune, vit, vit_runner

pytest.importorskip("sklearn", reason="the study needs scikit-learn (gelucheck[study])")


@pytest.mark.parametrize("change, words", [
    ({"activations": ("relu", "silu")}, "include it"),
    ({"dim": 30, "heads": 4}, "not a multiple"),
    ({"patch": 3}, "1, 2, 4 or 8"),
    ({"fine_tune": (0, 2, 2)}, "distinct counts"),
    ({"epochs": 0}, "--epochs 0"),
    ({"activations": ("gelu", "swish")}, "unknown activation 'swish'"),
    ({"lr": 0.0}, "--lr 0.0: need a positive learning rate"),
    ({"fine_tune_lr": float("nan")}, "--fine-tune-lr nan: need a positive learning rate"),
])
def test_bad_options_are_refused_before_any_training(change, words):
    config = vit.VitConfig(**change)
    with pytest.raises(UsageError, match=words):
        vit_runner.validate(config)


def test_the_cli_refuses_before_training(capsys):
    assert main(["study", "vit", "--activation", "relu", "--no-progress"]) == 2
    assert "include it" in capsys.readouterr().err


def test_patches_are_the_image_in_2x2_squares_row_by_row():
    import torch

    model = vit.network(vit.VitConfig(), 0)
    image = torch.arange(64, dtype=torch.float32).reshape(1, 8, 8)
    p = model.patches(image)
    assert p.shape == (1, 16, 4)
    assert p[0, 0].tolist() == [0, 1, 8, 9]  # the top-left square
    assert p[0, 1].tolist() == [2, 3, 10, 11]  # the next one to its right
    assert p[0, 4].tolist() == [16, 17, 24, 25]  # the first of the second row of squares


def test_the_split_is_stratified_disjoint_and_whole():
    d = vit.data(vit.VitConfig(), 3)
    parts = [set(d.index[k].tolist()) for k in ("train", "val", "test")]
    assert sum(map(len, parts)) == 1797 and len(set.union(*parts)) == 1797
    assert len(d.y_test) == 360 and np.bincount(d.y_test).min() >= 35  # ~36 of each digit


def test_the_activation_is_only_the_feed_forward_blocks():
    """With the FFNs' output weights zeroed, no swap changes a logit: the attention does not
    use the activation under study."""
    import torch

    model = vit.network(vit.VitConfig(), 0)
    for block in model.blocks:
        torch.nn.init.zeros_(block.down.weight)
    x = torch.rand(5, 8, 8)
    with torch.no_grad():
        a, b = model(x, torch.relu), model(x, torch.tanh)
    assert torch.equal(a, b)


def test_the_gap_closed_by_hand():
    assert finetune.gap_closed(0.9, 0.8, 0.85) == pytest.approx(0.5)
    assert finetune.gap_closed(0.9, 0.8, 0.8) == 0
    assert finetune.gap_closed(0.9, 0.9, 0.95) is None  # nothing was lost


@pytest.mark.slow  # two short studies in processes of their own
def test_the_same_seeds_give_the_same_bytes_whatever_the_workers(tmp_path):
    paths = []
    for workers in ("1", "2"):
        path = tmp_path / f"w{workers}.json"
        assert main(["study", "vit", "--seeds", "2", "--epochs", "2", "--workers", workers,
                     "--fine-tune-epochs", "0,1", "--no-progress", "--json", str(path)]) == 0
        paths.append(path)
    assert paths[0].read_bytes() == paths[1].read_bytes()
    study = json.loads(paths[0].read_text())
    labels = [s["label"] for s in study["swaps"]]
    assert labels == ["gelu -> gelu (control)", "gelu -> relu", "gelu -> gelu_tanh",
                      "gelu -> quick_gelu", "gelu -> gelu in bfloat16", "gelu -> gelu in float16"]
    assert all(set(s["recovery"]) == {"0", "1"} for s in study["swaps"])
    control = study["swaps"][0]
    assert control["accuracy_change"]["mean"] == 0 and control["flip_share_max"] == 0


@pytest.mark.slow  # one seed at the default epochs: seconds
def test_every_activation_learns_the_digits_well_above_chance():
    record = vit_runner.run_seed(vit.VitConfig(seeds=1, fine_tune=(0,)), 0)
    for a, run in record["runs"].items():
        assert run["test_accuracy"] > 0.8, a  # chance is 10%


@pytest.mark.slow  # the moons study fine-tuned: seconds
def test_moons_fine_tune_reports_the_recovery_of_each_swap_that_hurts(tmp_path):
    path = tmp_path / "m.json"
    assert main(["study", "moons", "--seeds", "3", "--epochs", "40", "--activation", "gelu",
                 "--activation", "relu", "--fine-tune", "0,5", "--workers", "1",
                 "--no-progress", "--json", str(path)]) == 0
    study = json.loads(path.read_text())
    assert study["config"]["fine_tune"] == [0, 5]
    for s in study["swaps"]:
        for k in ("0", "5"):
            r = s["recovery"][k]
            assert (r["gap_closed"] is None) == (r["seeds"] == 0)
        if s["recovery"]["0"]["seeds"]:  # before any epoch nothing is won back
            assert s["recovery"]["0"]["gap_closed"]["mean"] == 0
    for record in study["seeds"]:
        for row in record["swaps"]:
            hurt = row["accuracy_change"] < 0
            assert (row["fine_tune"] is not None) == hurt


def test_a_bad_split_is_refused_with_what_is_valid(capsys):
    with pytest.raises(SystemExit) as exited:  # argparse's own refusal
        main(["study", "vit", "--split", "0.5,0.5", "--no-progress"])
    assert exited.value.code == 2
    assert "three positive shares that add up to 1" in capsys.readouterr().err


def test_a_saved_vit_study_renders_in_the_page(tmp_path):
    """html --study places a ViT study's section (tables and figures) in the page; the study
    here is assembled from two hand-made seeds, no training."""
    pytest.importorskip("matplotlib", reason="the page's figures need matplotlib")
    config = vit.VitConfig(seeds=2, activations=("gelu", "relu"), fine_tune=(0, 1))
    records = []
    for seed, (g, r) in enumerate([(0.95, 0.96), (0.94, 0.93)]):
        swaps = [{"label": s.label, "evaluated": s.evaluated, "dtype": s.dtype,
                  "accuracy_change": -0.01 if s.evaluated == "relu" else 0.0,
                  "flip_share": 0.02 if s.evaluated == "relu" else 0.0, "max_logit_change": 1.0,
                  "fine_tune": ({"0": {"accuracy": g - 0.01, "gap_closed": 0.0},
                                 "1": {"accuracy": g, "gap_closed": 1.0}}
                                if s.evaluated == "relu" else None)}
                 for s in vit_runner.SWAPS]
        records.append({"seed": seed, "data": {}, "swaps": swaps,
                        "runs": {"gelu": {"test_accuracy": g, "val_accuracy": [g]},
                                 "relu": {"test_accuracy": r, "val_accuracy": [r]}},
                        "control_fine_tune": {"0": g, "1": g}})
    study = vit_runner.assemble(config, records)
    relu = next(s for s in study["swaps"] if s["evaluated"] == "relu")
    assert relu["recovery"]["1"]["gap_closed"]["mean"] == 1.0  # all of the loss won back
    assert relu["recovery"]["1"]["versus_control"]["mean"] == 0.0
    path = tmp_path / "vit.json"
    from gelucheck.study import output

    output.write_json(study, path)
    page = tmp_path / "page.html"
    assert main(["html", "--study", str(path), "-o", str(page)]) == 0
    text = page.read_text()
    assert "load_digits ViT study" in text and "Fine-tuning after the swap" in text
    assert text.count("<img") >= 2  # accuracy per seed, recovery curves
    # the same study mangled: refused with the file named, read by the ViT study's tables
    del study["trained"]
    output.write_json(study, path)
    assert main(["html", "--study", str(path), "-o", str(tmp_path / "bad.html")]) == 2
    assert not (tmp_path / "bad.html").exists()

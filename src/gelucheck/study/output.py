"""The study's tables (terminal and Markdown), its JSON file and its HTML section."""
from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import UsageError
from ..report import jsonio
from . import runner
from .cells import html_sections, interval, mean_sd, p_value, render_sections, won_back


def sections(study: dict) -> list[tuple[str, list[str], list[list]]]:
    n = study["config"]["seeds"]
    rows = [[a, mean_sd(s["test_accuracy"], 100), interval(s["test_accuracy"], 100),
             mean_sd(s["test_loss"], 1, 4), interval(s["test_loss"], 1, 4)]
            for a, s in study["summary"].items()]
    out = [(f"Test accuracy (%) and loss over {n} seeds: mean ± sd, 95% CI (Student's t)",
            ["activation", "accuracy %", "95% CI", "loss", "95% CI"], rows)]
    paired = []
    for a, p in study["paired"].items():
        acc, loss = p["test_accuracy"], p["test_loss"]
        paired.append([f"{a} - {p['against']}", f"{acc['mean'] * 100:+.2f}",
                       interval(acc, 100), p_value(acc["p_wilcoxon"]),
                       f"{acc['wins']}/{acc['ties']}/{acc['losses']}",
                       f"{loss['mean']:+.4f}", interval(loss, 1, 4), p_value(loss["p_wilcoxon"]),
                       f"{loss['wins']}/{loss['ties']}/{loss['losses']}"])
    out.append(("Paired differences per seed (Wilcoxon signed-rank, two-sided; wins/ties/losses "
                "of the first: higher accuracy, lower loss)",
                ["pair", "Δ accuracy pts", "95% CI", "p", "w/t/l", "Δ loss", "95% CI", "p",
                 "w/t/l"], paired))
    swaps = []
    for s in study["swaps"]:
        change, drift = s["accuracy_change"], s["activation_drift"]
        swaps.append([s["label"], f"{change['mean'] * 100:+.2f}",
                      f"{s['flip_share_mean'] * 100:.2f} / {s['flip_share_max'] * 100:.2f}",
                      f"{s['seeds_with_flips']}/{n}", f"{s['max_logit_change']:.3g}",
                      f"{drift['max_abs']:.3g}" + (f" at {drift['at']:.4g}"
                                                   if drift["max_abs"] else ""),
                      f"[{drift['range'][0]:.3g}, {drift['range'][1]:.3g}]"])
    out.append(("Swapping the activation of trained networks at inference (test set): accuracy "
                "change, predictions that flip (mean / max over seeds), largest logit change; "
                "beside it the largest per-input change of the activation itself (torch, "
                "gelucheck's float32 inputs in the range of pre-activations the networks saw)",
                ["trained -> evaluated", "Δ accuracy pts", "flips % mean / max",
                 "seeds with flips", "max |Δ logit|", "max |Δ f(x)| per input", "x range"],
                swaps))
    if study["config"].get("fine_tune"):
        ks = [str(k) for k in study["config"]["fine_tune"]]
        recovered = [[s["label"], str(s["recovery"][ks[0]]["seeds"]),
                      *(won_back(s["recovery"][k]) for k in ks)]
                     for s in study["swaps"] if s["recovery"][ks[0]]["seeds"]]
        out.append((f"Fine-tuning after the swap (Adam, lr {study['config']['fine_tune_lr']}): "
                    "the share of the accuracy the swap lost that k epochs win back, mean and "
                    "95% CI over the seeds where it hurt (100%: all of it)",
                    ["swap", "seeds hurt", *(f"k = {k}" for k in ks)], recovered))
    return out


def heading(study: dict) -> str:
    c = study["config"]
    return (f"make_moons study: {c['samples']} points, noise {c['noise']}, split "
            f"{'/'.join(str(s) for s in c['split'])} (train/validation/test); "
            f"{study['architecture']}; Adam lr {c['lr']}, batch {c['batch_size']}, "
            f"{c['epochs']} epochs; seeds {c['first_seed']}..{c['first_seed'] + c['seeds'] - 1}")


def render(study: dict, style: str = "plain") -> str:
    return render_sections(heading(study), sections(study), style)


def write_json(study: dict, path: Path) -> None:
    path.write_text(jsonio.encode(study) + "\n")


def read(path: str | Path) -> dict:
    """A saved study; refused with the file named when it is not one."""
    try:
        study = jsonio.decode(Path(path).read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"{path}: not a readable study JSON file ({exc})") from None
    if not isinstance(study, dict) or study.get("kind") != "study":
        raise UsageError(f"{path}: not a gelucheck study file (write one with "
                         "`gelucheck study moons --json FILE` or `gelucheck study vit --json "
                         "FILE`)")
    tables = render
    if study.get("study") == "vit":
        from . import vit_output, vit_runner

        if study.get("schema_version") != vit_runner.SCHEMA:
            raise UsageError(f"{path}: ViT study schema {study.get('schema_version')}, this "
                             f"gelucheck reads schema {vit_runner.SCHEMA}")
        tables = vit_output.render
    elif study.get("schema_version") != runner.SCHEMA:
        raise UsageError(f"{path}: study schema {study.get('schema_version')}, this gelucheck "
                         f"reads schema {runner.SCHEMA}")
    with damage_named(path):  # its tables, before any other work
        tables(study)
    return study


@contextmanager
def damage_named(path: str | Path) -> Iterator[None]:
    """A study file that is not what gelucheck writes - a field missing, or of another
    type - refused with its name, not a traceback from deep in its tables or figures (a
    study is nested plain JSON: its shape is what the tables and figures read)."""
    try:
        yield
    except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:
        raise UsageError(f"{path}: a study file that lacks or mangles a field "
                         f"({type(exc).__name__}: {exc})") from None


def html_section(study: dict) -> str:
    """The study as a section of the HTML report: its tables and its figures."""
    if study.get("study") == "vit":
        from . import vit_output

        return vit_output.html_section(study)
    from . import plots

    return html_sections("The make_moons study: ReLU and GELU over many seeds", heading(study),
                         sections(study), plots.figures(study))

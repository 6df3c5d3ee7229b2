"""The ViT study's tables (terminal and Markdown), figures and HTML section; its JSON is
written and read as the moons study's (study.output)."""
from __future__ import annotations

from .cells import html_sections, interval, mean_sd, p_value, render_sections, won_back


def sections(study: dict) -> list[tuple[str, list[str], list[list]]]:
    n = study["config"]["seeds"]
    rows = [[a, mean_sd(s["test_accuracy"], 100), interval(s["test_accuracy"], 100)]
            for a, s in study["summary"].items()]
    out = [(f"Test accuracy (%) over {n} seeds: mean ± sd, 95% CI (Student's t)",
            ["FFN activation", "accuracy %", "95% CI"], rows)]
    paired = [[f"{a} - {p['against']}", f"{p['test_accuracy']['mean'] * 100:+.2f}",
               interval(p["test_accuracy"], 100), p_value(p["test_accuracy"]["p_wilcoxon"]),
               "{wins}/{ties}/{losses}".format(**p["test_accuracy"])]
              for a, p in study["paired"].items()]
    out.append(("Paired differences per seed (Wilcoxon signed-rank, two-sided; wins/ties/losses "
                "of the first)", ["pair", "Δ accuracy pts", "95% CI", "p", "w/t/l"], paired))
    swaps = [[s["label"], f"{s['accuracy_change']['mean'] * 100:+.2f}",
              interval(s["accuracy_change"], 100),
              f"{s['flip_share_mean'] * 100:.2f} / {s['flip_share_max'] * 100:.2f}",
              f"{s['seeds_hurt']}/{n}", f"{s['max_logit_change']:.3g}"]
             for s in study["swaps"]]
    out.append((f"Swapping the FFN activation of the {study['trained']}-trained ViTs at "
                "inference (test set): accuracy change, predictions that flip (mean / max over "
                "seeds), the seeds where it hurt, the largest logit change",
                ["trained -> evaluated", "Δ accuracy pts", "95% CI", "flips % mean / max",
                 "seeds hurt", "max |Δ logit|"], swaps))
    ks = [str(k) for k in study["config"]["fine_tune"]]
    recovery = [[s["label"], *(won_back(s["recovery"][k]) for k in ks)]
                for s in study["swaps"] if s["seeds_hurt"]]
    versus = [[s["label"], *(_points(s["recovery"][k]["versus_control"]) for k in ks)]
              for s in study["swaps"] if s["seeds_hurt"]]
    out.append(("Fine-tuned after the swap against the unswapped network fine-tuned for as many "
                "epochs (the extra epochs alone may improve it): accuracy difference, points, "
                "mean and 95% CI over the seeds where the swap hurt",
                ["swap", *(f"k = {k}" for k in ks)], versus))
    out.append(("Fine-tuning after the swap (Adam, lr "
                f"{study['config']['fine_tune_lr']}): the share of the accuracy the swap lost "
                "that k epochs win back, mean and 95% CI over the seeds where it hurt (100%: "
                "all of it; more: better than before the swap)",
                ["swap", *(f"k = {k}" for k in ks)], recovery))
    return out


def _points(summary: dict) -> str:
    return f"{summary['mean'] * 100:+.2f} {interval(summary, 100)}"


def heading(study: dict) -> str:
    c = study["config"]
    return (f"load_digits ViT study: 1,797 8x8 images, split "
            f"{'/'.join(str(s) for s in c['split'])} (train/validation/test, stratified); "
            f"{study['architecture']}; Adam lr {c['lr']}, batch {c['batch_size']}, "
            f"{c['epochs']} epochs; seeds {c['first_seed']}..{c['first_seed'] + c['seeds'] - 1}")


def render(study: dict, style: str = "plain") -> str:
    return render_sections(heading(study), sections(study), style)


def figures(study: dict):
    """(name, figure): every seed's accuracy per activation; the recovery curves."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    acts = study["config"]["activations"]
    fig, ax = plt.subplots(figsize=(7, 3.6), layout="constrained")
    for k, a in enumerate(acts):
        values = [r["runs"][a]["test_accuracy"] * 100 for r in study["seeds"]]
        ax.plot(np.full(len(values), k) + np.linspace(-0.15, 0.15, len(values)), values, "o",
                ms=4, label=a)
        ax.hlines(np.mean(values), k - 0.3, k + 0.3, color="k")
    ax.set_xticks(range(len(acts)), acts)
    ax.set_ylabel("test accuracy %")
    ax.set_title("ViT on load_digits: every seed's test accuracy (bar: the mean)")
    yield "accuracy per activation and seed", fig
    hurt = [s for s in study["swaps"] if s["seeds_hurt"]]
    if hurt:
        ks = study["config"]["fine_tune"]
        fig, ax = plt.subplots(figsize=(7, 3.6), layout="constrained")
        for s in hurt:
            means = [s["recovery"][str(k)]["gap_closed"]["mean"] * 100 for k in ks]
            ax.plot(ks, means, "o-", label=f"{s['label']} ({s['seeds_hurt']} seeds)")
        ax.axhline(100, color="grey", ls="--", lw=0.8, label="all of the loss won back")
        ax.set_xlabel("fine-tuning epochs after the swap")
        ax.set_ylabel("share of the loss won back %")
        ax.set_title("Recovery after the swap, mean over the seeds where it hurt")
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1))
        yield "recovery curves", fig


def write_plots(study: dict, folder) -> list:
    from pathlib import Path

    import matplotlib.pyplot as plt

    written = []
    for name, fig in figures(study):
        path = Path(folder) / f"vit-{name.replace(' ', '-')}.png"
        fig.savefig(path, dpi=100)
        plt.close(fig)
        written.append(path)
    return written


def html_section(study: dict) -> str:
    return html_sections("The load_digits ViT study: GELU in a Transformer's feed-forward "
                         "blocks", heading(study), sections(study), figures(study))

"""The study's figures, drawn from its JSON (so a saved study renders again without
training): decision boundaries of one seed, every seed's accuracy, learning curves."""
from __future__ import annotations

from pathlib import Path
from typing import Any  # (matplotlib figures: matplotlib loads only when drawing)

import numpy as np


def _network(study: dict, activation: str):
    """The plotted seed's trained network, rebuilt from the weights the JSON keeps."""
    import torch

    from .activations import ACTIVATIONS
    from .moons import Config, network

    c = study["config"]
    config = Config(hidden=tuple(c["hidden"]))
    model = network(config, 0)
    weights = study["seeds"][0]["runs"][activation]["weights"]
    model.load_state_dict({k: torch.tensor(v) for k, v in weights.items()})
    model.activation = ACTIVATIONS[activation].make()
    return model


def boundaries(study: dict):
    import matplotlib.pyplot as plt
    import torch

    from .moons import Config, data

    c = study["config"]
    seed = study["seeds"][0]["seed"]
    split = data(Config(samples=c["samples"], noise=c["noise"], split=tuple(c["split"])), seed)
    acts = c["activations"]
    fig, axes = plt.subplots(1, len(acts), figsize=(4 * len(acts), 3.6), squeeze=False)
    x = split.x_test
    lo, hi = x.min(0) - 0.5, x.max(0) + 0.5
    gx, gy = np.meshgrid(np.linspace(lo[0], hi[0], 200), np.linspace(lo[1], hi[1], 200))
    grid = torch.from_numpy(np.c_[gx.ravel(), gy.ravel()].astype(np.float32))
    for ax, a in zip(axes[0], acts):
        with torch.no_grad():
            p = torch.softmax(_network(study, a)(grid), 1)[:, 1].reshape(gx.shape).numpy()
        ax.contourf(gx, gy, p, levels=20, cmap="RdBu_r", alpha=0.6)
        ax.contour(gx, gy, p, levels=[0.5], colors="k", linewidths=1)
        ax.scatter(x[:, 0], x[:, 1], c=split.y_test, cmap="RdBu_r", s=6, edgecolors="k",
                   linewidths=0.2)
        acc = study["seeds"][0]["runs"][a]["test_accuracy"]
        ax.set_title(f"{a}: test accuracy {acc * 100:.2f}% (seed {seed})", fontsize=9)
    fig.tight_layout()
    return fig


def seed_accuracies(study: dict):
    import matplotlib.pyplot as plt

    acts = study["config"]["activations"]
    fig, ax = plt.subplots(figsize=(6, 3.6))
    for k, a in enumerate(acts):
        acc = [r["runs"][a]["test_accuracy"] * 100 for r in study["seeds"]]
        ax.scatter(np.full(len(acc), k) + np.linspace(-0.15, 0.15, len(acc)), acc, s=12)
        ax.hlines(np.mean(acc), k - 0.25, k + 0.25, colors="k")
    for r in study["seeds"]:  # the pairing: one line per seed
        ax.plot(range(len(acts)), [r["runs"][a]["test_accuracy"] * 100 for a in acts],
                color="0.8", lw=0.5, zorder=0)
    ax.set_xticks(range(len(acts)), acts)
    ax.set_ylabel("test accuracy %")
    ax.set_title("every seed's test accuracy (lines join the same seed)", fontsize=9)
    fig.tight_layout()
    return fig


def learning_curves(study: dict):
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    for a in study["config"]["activations"]:
        for ax, key in zip(axes, ("val_loss", "val_accuracy")):
            curves = np.array([r["runs"][a][key] for r in study["seeds"]])
            mean, sd = curves.mean(0), curves.std(0)
            epochs = np.arange(1, curves.shape[1] + 1)
            ax.plot(epochs, mean, label=a)
            ax.fill_between(epochs, mean - sd, mean + sd, alpha=0.2)
            ax.set_xlabel("epoch")
            ax.set_ylabel(key.replace("val_", "validation "))
    axes[0].legend()
    fig.suptitle("learning curves on the validation set (mean ± sd over seeds)", fontsize=9)
    fig.tight_layout()
    return fig


def figures(study: dict) -> list[tuple[str, Any]]:
    return [("decision boundaries", boundaries(study)),
            ("test accuracy per seed", seed_accuracies(study)),
            ("learning curves", learning_curves(study))]


def write(study: dict, directory: Path) -> list[Path]:
    import matplotlib.pyplot as plt

    out = []
    for name, fig in figures(study):
        path = directory / f"moons_{name.replace(' ', '_')}.png"
        fig.savefig(path, dpi=100)
        plt.close(fig)
        out.append(path)
    return out

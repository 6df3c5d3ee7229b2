"""make_moons, one small MLP, Adam: the data, the network and its training, all seeded.

Everything a seed decides (the sample, its split, the initial weights, the order of batches)
comes from that seed alone, so networks that differ only in their activation are trained on
the same data from the same weights in the same order: the comparison is paired.
"""
from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from .activations import ACTIVATIONS, DEFAULT

if TYPE_CHECKING:  # (torch loads when a study runs, not when gelucheck does)
    import torch


@dataclass(frozen=True)
class Config:
    seeds: int = 20
    epochs: int = 100
    samples: int = 2000
    noise: float = 0.2
    hidden: tuple[int, ...] = (32, 32)
    batch_size: int = 32
    lr: float = 0.001
    activations: tuple[str, ...] = DEFAULT
    # train / validation / test shares; the test set is used for the final figures only
    split: tuple[float, float, float] = (0.6, 0.2, 0.2)
    first_seed: int = 0
    # --fine-tune: epochs of fine-tuning after each swap that hurts (none by default)
    fine_tune: tuple[int, ...] = ()
    fine_tune_lr: float = 0.0001

    def to_json(self) -> dict:
        return {"seeds": self.seeds, "epochs": self.epochs, "samples": self.samples,
                "noise": self.noise, "hidden": list(self.hidden),
                "batch_size": self.batch_size, "lr": self.lr, "optimizer": "Adam",
                "loss": "cross-entropy over two logits",
                "activations": list(self.activations), "split": list(self.split),
                "first_seed": self.first_seed,
                **({"fine_tune": list(self.fine_tune), "fine_tune_lr": self.fine_tune_lr}
                   if self.fine_tune else {})}

    @property
    def architecture(self) -> str:
        sizes = (2, *self.hidden, 2)
        return " -> ".join(str(s) for s in sizes) + " (Linear layers, the activation between)"


@dataclass
class Split:
    x_train: np.ndarray
    y_train: np.ndarray
    x_val: np.ndarray
    y_val: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    # indices into the generated sample, to show the parts are disjoint
    index: dict = field(default_factory=dict)


def data(config: Config, seed: int) -> Split:
    """The seed's make_moons sample, shuffled and split (scikit-learn; float32)."""
    from sklearn.datasets import make_moons

    x, y = make_moons(n_samples=config.samples, noise=config.noise, random_state=seed)
    order = np.random.default_rng(seed).permutation(config.samples)
    n_train = round(config.split[0] * config.samples)
    n_val = round(config.split[1] * config.samples)
    parts = {"train": order[:n_train], "val": order[n_train:n_train + n_val],
             "test": order[n_train + n_val:]}
    x = x.astype(np.float32)
    return Split(x[parts["train"]], y[parts["train"]], x[parts["val"]], y[parts["val"]],
                 x[parts["test"]], y[parts["test"]], parts)


def network(config: Config, seed: int):
    """The MLP with its initial weights drawn from the seed (the same for every activation)."""
    import torch
    from torch import nn

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            sizes = (2, *config.hidden, 2)
            self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in itertools.pairwise(sizes))
            self.activation: Callable | None = None  # set once trained with one

        def forward(self, x, activation=None, pre=None):
            """Logits; ``activation`` replaces the trained one (a swap); ``pre`` collects
            each hidden layer's pre-activations."""
            act = activation or self.activation
            if act is None:
                raise ValueError("the network has no activation yet: train() sets it")
            for layer in self.layers[:-1]:
                x = layer(x)
                if pre is not None:
                    pre.append(x.detach())
                x = act(x)
            return self.layers[-1](x)

    torch.manual_seed(seed)
    return MLP()


@dataclass
class Trained:
    model: torch.nn.Module
    val_loss: list[float]
    val_accuracy: list[float]
    test_loss: float
    test_accuracy: float


def train(config: Config, split: Split, seed: int, activation: str) -> Trained:
    """Adam on the training split for config.epochs epochs; the validation split is evaluated
    after each (learning curves); the test split once, at the end."""
    import torch
    import torch.nn.functional as F

    model = network(config, seed)
    model.activation = ACTIVATIONS[activation].make()
    optimizer = torch.optim.Adam(model.parameters(), lr=config.lr)
    x, y = torch.from_numpy(split.x_train), torch.from_numpy(split.y_train)
    x_val, y_val = torch.from_numpy(split.x_val), torch.from_numpy(split.y_val)
    order = torch.Generator().manual_seed(seed)
    val_loss, val_accuracy = [], []
    for _ in range(config.epochs):
        model.train()
        for batch in torch.randperm(len(x), generator=order).split(config.batch_size):
            optimizer.zero_grad()
            F.cross_entropy(model(x[batch]), y[batch]).backward()
            optimizer.step()
        loss, accuracy = evaluate(model, x_val, y_val)
        val_loss.append(loss)
        val_accuracy.append(accuracy)
    loss, accuracy = evaluate(model, torch.from_numpy(split.x_test),
                              torch.from_numpy(split.y_test))
    return Trained(model, val_loss, val_accuracy, loss, accuracy)


def evaluate(model, x, y, activation=None) -> tuple[float, float]:
    import torch
    import torch.nn.functional as F

    with torch.no_grad():
        logits = model(x, activation)
        return (float(F.cross_entropy(logits, y)),
                float((logits.argmax(1) == y).double().mean()))

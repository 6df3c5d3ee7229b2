"""A small Vision Transformer on scikit-learn's load_digits (1,797 8x8 images, shipped with
scikit-learn: no download), with the activation of its feed-forward blocks the one under
study - where GELU lives in Transformers - and never in the attention.

Everything a seed decides (the stratified split, the initial weights, the batch order) comes
from that seed alone, so networks that differ only in their activation are paired, as in the
make_moons study.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .activations import ACTIVATIONS
from .finetune import train_epochs
from .moons import Split  # the same train/validation/test parts as make_moons'

DEFAULT_VIT = ("gelu", "gelu_tanh", "relu", "silu")


@dataclass(frozen=True)
class VitConfig:
    seeds: int = 10
    epochs: int = 30
    patch: int = 2  # 2x2 patches of the 8x8 image: 16 tokens and a class token
    dim: int = 32
    heads: int = 4
    depth: int = 2
    mlp: int = 64  # the feed-forward block's hidden width
    batch_size: int = 64
    lr: float = 0.003
    activations: tuple[str, ...] = DEFAULT_VIT
    split: tuple[float, float, float] = (0.6, 0.2, 0.2)  # train / validation / test
    fine_tune: tuple[int, ...] = (0, 1, 2, 5, 10)  # epochs after a swap
    fine_tune_lr: float = 0.0003
    first_seed: int = 0

    def to_json(self) -> dict:
        return {"seeds": self.seeds, "epochs": self.epochs, "patch": self.patch,
                "dim": self.dim, "heads": self.heads, "depth": self.depth, "mlp": self.mlp,
                "batch_size": self.batch_size, "lr": self.lr, "optimizer": "Adam",
                "loss": "cross-entropy over ten logits",
                "activations": list(self.activations), "split": list(self.split),
                "fine_tune": list(self.fine_tune), "fine_tune_lr": self.fine_tune_lr,
                "first_seed": self.first_seed}

    @property
    def tokens(self) -> int:
        return (8 // self.patch) ** 2

    @property
    def architecture(self) -> str:
        return (f"ViT: {self.patch}x{self.patch} patches -> {self.tokens} tokens + a class "
                f"token, learned positions, dim {self.dim}, {self.depth} pre-norm encoder "
                f"blocks (multi-head attention, {self.heads} heads; FFN {self.dim} -> "
                f"{self.mlp} -> {self.dim} with the activation under study), LayerNorm, "
                f"a linear head to 10 classes")


def data(config: VitConfig, seed: int) -> Split:
    """load_digits split into train / validation / test, stratified by class, from the seed;
    pixels scaled to [0, 1] (float32)."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)
    y = digits.target.astype(np.int64)
    index = np.arange(len(y))
    train_share, val_share, test_share = config.split
    rest, test = train_test_split(index, test_size=test_share, stratify=y, random_state=seed)
    train, val = train_test_split(rest, test_size=val_share / (train_share + val_share),
                                  stratify=y[rest], random_state=seed)
    return Split(x[train], y[train], x[val], y[val], x[test], y[test],
                  {"train": train, "val": val, "test": test})


def network(config: VitConfig, seed: int):
    """The ViT, its initial weights from the seed (the same for every activation). Written
    with torch's modules; the encoder block is spelled out so that the FFN's activation is an
    attribute a swap can replace (torch's TransformerEncoderLayer may take a fused path)."""
    import torch
    from torch import nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm1 = nn.LayerNorm(config.dim)
            self.attention = nn.MultiheadAttention(config.dim, config.heads, batch_first=True)
            self.norm2 = nn.LayerNorm(config.dim)
            self.up = nn.Linear(config.dim, config.mlp)
            self.down = nn.Linear(config.mlp, config.dim)

        def forward(self, x, activation, attention=None):
            h = self.norm1(x)
            a, weights = self.attention(h, h, h, need_weights=attention is not None)
            if attention is not None:
                attention.append(weights.detach())
            x = x + a
            return x + self.down(activation(self.up(self.norm2(x))))

    class ViT(nn.Module):
        def __init__(self):
            super().__init__()
            p = config.patch
            self.embed = nn.Linear(p * p, config.dim)
            self.cls = nn.Parameter(torch.zeros(1, 1, config.dim))
            self.position = nn.Parameter(torch.randn(1, config.tokens + 1, config.dim) * 0.02)
            self.blocks = nn.ModuleList(Block() for _ in range(config.depth))
            self.norm = nn.LayerNorm(config.dim)
            self.head = nn.Linear(config.dim, 10)
            self.activation = None

        def patches(self, images):
            p = config.patch
            n = images.shape[0]
            x = images.reshape(n, 8 // p, p, 8 // p, p).permute(0, 1, 3, 2, 4)
            return x.reshape(n, config.tokens, p * p)

        def forward(self, images, activation=None, attention=None):
            act = activation or self.activation
            x = self.embed(self.patches(images))
            x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1) + self.position
            for block in self.blocks:
                x = block(x, act, attention)
            return self.head(self.norm(x[:, 0]))

    torch.manual_seed(seed)
    return ViT()


def train(config: VitConfig, digits: Split, seed: int, name: str):
    """The network trained with activation ``name`` (the same weights and batches for every
    activation of the seed): (model, validation accuracy after each epoch)."""
    import torch

    model = network(config, seed)
    model.activation = ACTIVATIONS[name].make()
    x, y = torch.from_numpy(digits.x_train), torch.from_numpy(digits.y_train)
    x_val, y_val = torch.from_numpy(digits.x_val), torch.from_numpy(digits.y_val)
    curve: list[float] = []
    train_epochs(model, None, x, y, config.epochs,
                 torch.optim.Adam(model.parameters(), lr=config.lr), config.batch_size,
                 torch.Generator().manual_seed(seed),
                 lambda: curve.append(accuracy(model, x_val, y_val)))
    return model, curve


def accuracy(model, x, y, activation=None) -> float:
    import torch

    model.eval()
    with torch.no_grad():
        return float((model(x, activation).argmax(1) == y).double().mean())

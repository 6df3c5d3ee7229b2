"""The activations a network can be trained with, and the forms one can be swapped for at
inference: a table, so that the study code never switches on names."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Activation:
    name: str
    description: str
    # torch tensor -> tensor; built lazily so that importing this table needs no torch
    make: Callable[[], Callable]
    # the gelucheck function whose correctly rounded values it computes, for the drift column
    function: str | None = None


def _gelu(approximate: str):
    def make():
        import torch.nn.functional as F

        return lambda x: F.gelu(x, approximate=approximate)
    return make


def _relu():
    import torch

    return torch.relu


def _silu():
    import torch.nn.functional as F

    return F.silu


def _quick_gelu():
    import torch

    return lambda x: x * torch.sigmoid(1.702 * x)


ACTIVATIONS = {a.name: a for a in (
    Activation("relu", "max(x, 0)", _relu),
    Activation("gelu", "exact GELU, x·Φ(x) (F.gelu, approximate='none')", _gelu("none"),
               "gelu"),
    Activation("gelu_tanh", "the tanh form (F.gelu, approximate='tanh')", _gelu("tanh"),
               "gelu_tanh"),
    Activation("silu", "x·σ(x)", _silu),
    Activation("quick_gelu", "x·σ(1.702x)", _quick_gelu),
)}
DEFAULT = ("relu", "gelu", "gelu_tanh")


def in_dtype(fn: Callable, dtype) -> Callable:
    """The activation computed in a narrower dtype (its input rounded to it, its output
    widened back): what serving a float32 network with 16-bit activations does to it."""
    return lambda x: fn(x.to(dtype)).to(x.dtype)

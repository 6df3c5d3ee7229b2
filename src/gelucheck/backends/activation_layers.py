"""A backend of the activation modules model code builds by name (transformers' ``ACT2FN``,
timm's ``create_act_layer``): each module measured as a model's inference runs it, on torch's
CPU kernels and kernel tier, declared with the function it computes."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .. import tiers
from ..functions import Function
from .base import Backend, Implementation
from .tensors import preparer, tensor_kernel, torch_layout_paths


@dataclass(frozen=True)
class Layer:
    """What a named activation computes: its function, the one it stands in for (None where
    it is that function itself), the formula its fingerprint should find where it stands in,
    and what its source computes."""

    function: Function
    approximates: Function | None
    formula: str | None
    source: str


def module_in_inference(module) -> Callable:
    """A torch module called as a model's inference calls it: without autograd's graph."""
    import torch

    def forward(t):
        with torch.no_grad():
            return module(t)

    return forward


def layers_backend(backend: str, version: str, layers: dict[str, Layer],
                   build: Callable[[str], object], lacks: Callable[[str], str],
                   holder: str) -> Backend:
    """The backend of ``layers``: ``build(name)`` gives the module (None where the installed
    release has no such name, listed as missing with ``lacks(name)``); ``holder`` names what
    holds them, in the reasons the functions they do not compute are missing."""
    impls, missing = [], {}
    for name, layer in layers.items():
        module = build(name)
        if module is None:
            missing[name] = lacks(name)
            continue
        forward = module_in_inference(module)
        impls.append(Implementation(
            backend, name, layer.function, tensor_kernel(forward), description=layer.source,
            approximates=layer.approximates, formula=layer.formula, prepare=preparer(forward),
            paths=torch_layout_paths(forward)))
    missing.update({f: f"{holder} are forward activations: their derivatives are torch's "
                    "autograd of the same ops (the torch backend measures those)"
                    for f in ("phi_grad", "gelu_grad", "gelu_tanh_grad")})
    missing.update({f: f"{holder} are activations, not the Gaussian CDF or erf"
                    for f in ("phi", "erf", "erfc")})
    return Backend(backend, True, "", version, tuple(impls), missing, tier=tiers.torch_tier())

"""PyTorch eager, on the CPU (``torch``) and on CUDA (``torch-cuda``)."""
from __future__ import annotations

from functools import cache

from ..functions import derivative
from .base import Backend, Implementation
from .formulas import phi_erf, phi_erfc
from .tensors import (
    preparer,
    synchronizer,
    tensor_kernel,
    torch_availability,
    torch_compile,
    torch_gradient,
    torch_layout_paths,
)


def torch_functions():
    """(name, function, torch callable, description) for every eager implementation."""
    import torch
    import torch.nn.functional as F

    gelu_none, gelu_tanh = torch.nn.GELU("none"), torch.nn.GELU("tanh")
    return [
        ("F.gelu", "gelu", lambda t: F.gelu(t, approximate="none"),
         "F.gelu(x, approximate='none')"),
        ("F.gelu", "gelu_tanh", lambda t: F.gelu(t, approximate="tanh"),
         "F.gelu(x, approximate='tanh')"),
        ("nn.GELU", "gelu", gelu_none, "torch.nn.GELU('none')"),
        ("nn.GELU", "gelu_tanh", gelu_tanh, "torch.nn.GELU('tanh')"),
        ("special.ndtr", "phi", torch.special.ndtr, "torch.special.ndtr(x)"),
        ("erf", "phi", lambda t: phi_erf(torch.erf, torch, t), "0.5*(1+torch.erf(x/sqrt(2)))"),
        ("erfc", "phi", lambda t: phi_erfc(torch.erfc, torch, t), "0.5*torch.erfc(-x/sqrt(2))"),
        ("x*erf", "gelu", lambda t: t * phi_erf(torch.erf, torch, t),
         "x*0.5*(1+torch.erf(x/sqrt(2)))"),
        ("x*erfc", "gelu", lambda t: t * phi_erfc(torch.erfc, torch, t),
         "x*0.5*torch.erfc(-x/sqrt(2))"),
        ("erf", "erf", torch.erf, "torch.erf(x)"),
        ("erfc", "erfc", torch.erfc, "torch.erfc(x)"),
        ("special.erf", "erf", torch.special.erf, "torch.special.erf(x)"),
        ("special.erfc", "erfc", torch.special.erfc, "torch.special.erfc(x)"),
    ]


def with_gradients(functions):
    """Each (name, function, fn, text) and, beside it, its derivative by autograd where the
    function has a derivative row (erf and erfc have none)."""
    out = []
    for impl, function, fn, text in functions:
        out.append((impl, function, fn, text))
        grad = derivative(function)
        if grad is not None:
            out.append((impl, grad.name, torch_gradient(fn),
                        f"d/dx of {text}: backward() with grad_out = 1"))
    return out


@cache  # once per implementation: each compile is a compilation
def call_paths(impl: str, function: str, device: str):
    """F.gelu's other call paths to the same outputs (for the consistency check): the module,
    aten's out= variant, and torch.compile with static and with dynamic shapes; for the
    derivative, the module's and the compiled functions' backward."""
    import torch
    import torch.nn.functional as F

    if impl != "F.gelu":
        return {}
    approximate = "tanh" if "tanh" in function else "none"
    forward = {
        "nn.GELU": torch.nn.GELU(approximate),
        "compile-static": torch_compile(lambda t: F.gelu(t, approximate=approximate), False),
        "compile-dynamic": torch_compile(lambda t: F.gelu(t, approximate=approximate), True),
    }
    if function.endswith("_grad"):
        return {name: tensor_kernel(torch_gradient(fn), device) for name, fn in forward.items()}

    def out_variant(t):
        out = torch.empty_like(t)
        torch.ops.aten.gelu.out(t, approximate=approximate, out=out)
        return out

    forward["aten.gelu.out"] = out_variant
    return {name: tensor_kernel(fn, device) for name, fn in forward.items()}


def _paths(impl: str, function: str, fn, device: str):
    layouts = torch_layout_paths(fn, device)
    return lambda fmt: {**layouts(fmt), **call_paths(impl, function, device)}


def load(device: str = "cpu") -> Backend:
    name = "torch" if device == "cpu" else "torch-cuda"
    ok, reason, version = torch_availability(device)
    if not ok:
        return Backend(name, False, reason, version)
    impls = tuple(Implementation(name, impl, function, tensor_kernel(fn, device), device=device,
                                 description=text, prepare=preparer(fn, device),
                                 synchronize=synchronizer(device),
                                 paths=_paths(impl, function, fn, device))
                  for impl, function, fn, text in with_gradients(torch_functions()))
    tier = None
    if device == "cpu":
        from .. import tiers

        tier = tiers.torch_tier()
    return Backend(name, True, "", version, impls, tier=tier)


def load_cuda() -> Backend:
    return load("cuda")

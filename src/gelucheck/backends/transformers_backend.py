"""The GELU activations Hugging Face transformers' model code calls by name (``ACT2FN``,
``transformers.activations``): torch modules, measured as a model runs them, on torch's
kernels and kernel tier. Each is declared with the function it computes (read from its
source): the exact form, the tanh form written several ways, x·σ(1.702x) and a GELU clipped to
[-10, 10] as stand-ins for exact GELU, measured as drift (docs/findings/transformers.md).
Entries the installed release lacks are listed as missing, with the reason."""
from __future__ import annotations

from ..functions import GELU, GELU_TANH, Function
from .base import Backend, Implementation
from .tensors import preparer, tensor_kernel, torch_availability, torch_layout_paths

# ACT2FN name: (the function it computes, the one it stands in for or None, the formula the
# fingerprint should find where it is a stand-in, what its source computes)
GELUS: dict[str, tuple[Function, Function | None, str | None, str]] = {
    "gelu": (GELU, None, None, "GELUActivation: torch.nn.functional.gelu"),
    "gelu_python": (GELU, None, None, "GELUActivation(use_gelu_python): "
                    "x*0.5*(1+torch.erf(x/sqrt(2)))"),
    "gelu_pytorch_tanh": (GELU_TANH, None, None,
                          "GELUTanh: torch.nn.functional.gelu(x, approximate='tanh')"),
    "gelu_python_tanh": (GELU_TANH, None, None, "GELUTanh(use_gelu_tanh_python): "
                         "0.5*x*(1+tanh(sqrt(2/pi)*(x+0.044715*x^3)))"),
    "gelu_new": (GELU_TANH, None, None,
                 "NewGELUActivation: 0.5*x*(1+tanh(sqrt(2/pi)*(x+0.044715*x^3)))"),
    "gelu_fast": (GELU_TANH, None, None,
                  "FastGELUActivation: 0.5*x*(1+tanh(0.7978845608*x*(1+0.044715*x^2)))"),
    "gelu_accurate": (GELU_TANH, None, None, "AccurateGELUActivation: "
                      "0.5*x*(1+tanh(sqrt(2/pi)*(x+0.044715*x^3))), constant precomputed"),
    "quick_gelu": (GELU, GELU, "sigmoid_1.702", "QuickGELUActivation: x*sigmoid(1.702*x)"),
    "gelu_10": (GELU, GELU, "exact", "ClippedGELUActivation(-10, 10): "
                "clip(gelu(x), -10, 10), for quantization"),
}


def load() -> Backend:
    ok, reason, torch_version = torch_availability("cpu")
    if not ok:
        return Backend("transformers", False, reason, torch_version)
    try:
        import transformers
        from transformers.activations import ACT2FN
    except ImportError as exc:
        return Backend("transformers", False, f"transformers is not installed ({exc}); pip "
                       "install 'gelucheck[transformers]'", None)
    import torch

    from .. import tiers

    impls, missing = [], {}
    for name, (function, approximates, formula, text) in GELUS.items():
        if name not in ACT2FN:
            missing[name] = f"transformers {transformers.__version__} has no ACT2FN[{name!r}]"
            continue
        module = ACT2FN[name]

        def forward(t, module=module):
            with torch.no_grad():  # as a model's inference runs it
                return module(t)

        impls.append(Implementation(
            "transformers", name, function, tensor_kernel(forward), description=text,
            approximates=approximates, formula=formula, prepare=preparer(forward),
            paths=torch_layout_paths(forward)))
    missing.update({f: "ACT2FN's entries are forward activations: their derivatives are "
                    "torch's autograd of the same ops (the torch backend measures those)"
                    for f in ("phi_grad", "gelu_grad", "gelu_tanh_grad")})
    missing.update({f: "ACT2FN holds activations, not the Gaussian CDF or erf"
                    for f in ("phi", "erf", "erfc")})
    version = f"{transformers.__version__}, torch {torch_version}"
    return Backend("transformers", True, "", version, tuple(impls), missing,
                   tier=tiers.torch_tier())

"""The GELU activations Hugging Face transformers' model code calls by name (``ACT2FN``,
``transformers.activations``): torch modules, measured as a model runs them, on torch's
kernels and kernel tier. Each is declared with the function it computes (read from its
source): the exact form, the tanh form written several ways, x·σ(1.702x) and a GELU clipped to
[-10, 10] as stand-ins for exact GELU, measured as drift (docs/findings/transformers-5.24.md).
Entries the installed release lacks are listed as missing, with the reason."""
from __future__ import annotations

from ..functions import GELU, GELU_TANH
from .activation_layers import Layer, layers_backend
from .base import Backend
from .tensors import torch_availability

# ACT2FN name: what it computes, from its source
GELUS: dict[str, Layer] = {
    "gelu": Layer(GELU, None, None, "GELUActivation: torch.nn.functional.gelu"),
    "gelu_python": Layer(GELU, None, None, "GELUActivation(use_gelu_python): "
                         "x*0.5*(1+torch.erf(x/sqrt(2)))"),
    "gelu_pytorch_tanh": Layer(GELU_TANH, None, None,
                               "GELUTanh: torch.nn.functional.gelu(x, approximate='tanh')"),
    "gelu_python_tanh": Layer(GELU_TANH, None, None, "GELUTanh(use_gelu_tanh_python): "
                              "0.5*x*(1+tanh(sqrt(2/pi)*(x+0.044715*x^3)))"),
    "gelu_new": Layer(GELU_TANH, None, None,
                      "NewGELUActivation: 0.5*x*(1+tanh(sqrt(2/pi)*(x+0.044715*x^3)))"),
    "gelu_fast": Layer(GELU_TANH, None, None,
                       "FastGELUActivation: 0.5*x*(1+tanh(0.7978845608*x*(1+0.044715*x^2)))"),
    "gelu_accurate": Layer(GELU_TANH, None, None, "AccurateGELUActivation: "
                           "0.5*x*(1+tanh(sqrt(2/pi)*(x+0.044715*x^3))), constant precomputed"),
    "quick_gelu": Layer(GELU, GELU, "sigmoid_1.702", "QuickGELUActivation: x*sigmoid(1.702*x)"),
    "gelu_10": Layer(GELU, GELU, "exact", "ClippedGELUActivation(-10, 10): "
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

    def build(name):
        # ACT2FN builds the module in __getitem__: get() would hand back its class
        return ACT2FN[name] if name in ACT2FN else None  # noqa: SIM401

    return layers_backend(
        "transformers", f"{transformers.__version__}, torch {torch_version}", GELUS, build,
        lambda name: f"transformers {transformers.__version__} has no ACT2FN[{name!r}]",
        "ACT2FN's entries")

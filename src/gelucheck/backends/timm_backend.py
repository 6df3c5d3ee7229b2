"""The GELU activations timm's models build by name (``act_layer="gelu"`` through
``timm.layers.create_act_layer``): torch modules, measured as a model runs them, on torch's
kernels and kernel tier. Each is declared with the function it computes (read from its source,
timm/layers/activations.py); QuickGELU, x·σ(1.702x), stands in for exact GELU and is measured
as drift (docs/findings/timm-1.0.md). Names the installed release lacks are listed as missing,
with the reason."""
from __future__ import annotations

from ..functions import GELU, GELU_TANH
from .activation_layers import Layer, layers_backend
from .base import Backend
from .tensors import torch_availability

# act_layer name: what it computes, from its source
GELUS: dict[str, Layer] = {
    "gelu": Layer(GELU, None, None, "GELU: torch.nn.functional.gelu"),
    "gelu_tanh": Layer(GELU_TANH, None, None,
                       "GELUTanh: torch.nn.functional.gelu(x, approximate='tanh')"),
    "quick_gelu": Layer(GELU, GELU, "sigmoid_1.702", "QuickGELU: x*torch.sigmoid(1.702*x)"),
}


def load() -> Backend:
    ok, reason, torch_version = torch_availability("cpu")
    if not ok:
        return Backend("timm", False, reason, torch_version)
    try:
        import timm
        from timm.layers import create_act_layer
    except ImportError as exc:
        return Backend("timm", False, f"timm is not installed ({exc}); pip install "
                       "'gelucheck[timm]'", None)
    except Exception as exc:  # noqa: BLE001 - torchvision's own load fails this way
        # timm imports torchvision, whose operators load only beside the torch build it was
        # made for ("operator torchvision::nms does not exist")
        return Backend("timm", False, f"timm is installed but does not import ({exc}): its "
                       "torchvision must be the build made for the installed torch", None)

    def build(name):
        try:
            return create_act_layer(name)
        except KeyError:
            return None

    # the figures are torch's kernels': a budget belongs to timm's release and torch's together
    return layers_backend(
        "timm", f"{timm.__version__} with torch {torch_version}", GELUS, build,
        lambda name: f"timm {timm.__version__} has no activation layer {name!r}",
        "timm's activation layers")

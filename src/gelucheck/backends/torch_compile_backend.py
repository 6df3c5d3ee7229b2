"""torch.compile of F.gelu, both forms, on the CPU (Inductor generates its own kernels)."""
from __future__ import annotations

from .base import Backend, Implementation
from .torch_backend import tensor_kernel


def load() -> Backend:
    try:
        import torch
        import torch.nn.functional as F
    except ImportError as exc:
        return Backend("torch-compile", False, f"torch is not installed ({exc})", None)

    def compiled(approximate: str):
        fn = torch.compile(lambda t: F.gelu(t, approximate=approximate), dynamic=True)
        return tensor_kernel(fn, "cpu")

    impls = (
        Implementation("torch-compile", "F.gelu", "gelu", compiled("none"),
                       description="torch.compile(F.gelu, approximate='none'), dynamic shapes"),
        Implementation("torch-compile", "F.gelu", "gelu_tanh", compiled("tanh"),
                       description="torch.compile(F.gelu, approximate='tanh'), dynamic shapes"),
    )
    return Backend("torch-compile", True, "", torch.__version__, impls)

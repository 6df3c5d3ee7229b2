"""torch.compile of F.gelu, both forms, on the CPU (Inductor generates its own kernels)."""
from __future__ import annotations

from .base import Backend, Implementation
from .tensors import preparer, tensor_kernel, torch_version_text


def load() -> Backend:
    try:
        import torch
        import torch.nn.functional as F
    except ImportError as exc:
        return Backend("torch-compile", False, f"torch is not installed ({exc})", None)

    def compiled(function: str, approximate: str) -> Implementation:
        fn = torch.compile(lambda t: F.gelu(t, approximate=approximate), dynamic=True)
        return Implementation("torch-compile", "F.gelu", function, tensor_kernel(fn, "cpu"),
                              description=f"torch.compile(F.gelu, approximate='{approximate}'),"
                                          " dynamic shapes", prepare=preparer(fn, "cpu"))

    impls = (compiled("gelu", "none"), compiled("gelu_tanh", "tanh"))
    return Backend("torch-compile", True, "", torch_version_text(), impls)

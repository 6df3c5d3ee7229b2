"""torch.compile of F.gelu, both forms, on the CPU (Inductor generates its own kernels)."""
from __future__ import annotations

from ..functions import derivative
from .base import Backend, Implementation
from .tensors import preparer, tensor_kernel, torch_gradient, torch_version_text


def load() -> Backend:
    try:
        import torch
        import torch.nn.functional as F
    except ImportError as exc:
        return Backend("torch-compile", False, f"torch is not installed ({exc})", None)

    # Dynamo keeps one cache per code object: both forms x 4 dtypes x forward/backward are 16
    # specialisations of the lambda below, past the default limit of 8, after which it would
    # run eager *silently*. Allow them all, and make any further recompile an error (reported
    # as this implementation's) rather than a quiet fallback to eager kernels.
    dynamo = torch._dynamo.config
    dynamo.recompile_limit = max(dynamo.recompile_limit, 64)
    dynamo.fail_on_recompile_limit_hit = True

    def compiled(function: str, approximate: str) -> tuple[Implementation, Implementation]:
        fn = torch.compile(lambda t: F.gelu(t, approximate=approximate), dynamic=True)
        text = f"torch.compile(F.gelu, approximate='{approximate}'), dynamic shapes"
        grad = torch_gradient(fn)  # AOTAutograd compiles the backward too
        return (Implementation("torch-compile", "F.gelu", function, tensor_kernel(fn, "cpu"),
                               description=text, prepare=preparer(fn, "cpu")),
                Implementation("torch-compile", "F.gelu", derivative(function).name,
                               tensor_kernel(grad, "cpu"), prepare=preparer(grad, "cpu"),
                               description=f"d/dx of {text}: its compiled backward"))

    impls = (*compiled("gelu", "none"), *compiled("gelu_tanh", "tanh"))
    return Backend("torch-compile", True, "", torch_version_text(), impls)

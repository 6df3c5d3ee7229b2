"""PyTorch's own CPU kernels for exact GELU and its derivative, where torch would hand a
contiguous float32 or bfloat16 tensor to oneDNN's (docs/design.md, Consistency across call
paths). For gelucheck's --impl with --framework torch, e.g.

    PYTHONPATH=docs/examples gelucheck sweep --impl torch_without_onednn:gelu \\
        --framework torch --backend torch:F.gelu --function gelu

oneDNN is turned off around the whole computation, the backward included (autograd would run
it later, with oneDNN on), and back on after."""
from contextlib import contextmanager

import torch
import torch.nn.functional as F


@contextmanager
def _without_onednn():
    # the attribute, not torch.backends.mkldnn.flags(): that also sets oneDNN's TF32 switch,
    # with a warning on every call
    enabled = torch.backends.mkldnn.enabled
    torch.backends.mkldnn.enabled = False
    try:
        yield
    finally:
        torch.backends.mkldnn.enabled = enabled


def gelu(t: torch.Tensor) -> torch.Tensor:
    with _without_onednn():
        return F.gelu(t, approximate="none")


def gelu_grad(t: torch.Tensor) -> torch.Tensor:
    with _without_onednn():
        t = t.detach().requires_grad_()
        y = F.gelu(t, approximate="none")
        y.backward(torch.ones_like(y))
        return t.grad

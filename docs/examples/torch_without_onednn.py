"""PyTorch's own CPU kernels for exact GELU and its derivative, where torch would hand a
contiguous float32 or bfloat16 tensor to oneDNN's (docs/design.md, Consistency across call
paths). For gelucheck's --impl with --framework torch, e.g.

    PYTHONPATH=docs/examples gelucheck sweep --impl torch_without_onednn:gelu \\
        --framework torch --backend torch:F.gelu --function gelu

oneDNN is turned off around the whole computation, the backward included (autograd would run
it later, with oneDNN on), and back on after."""
import torch
import torch.nn.functional as F

from gelucheck.backends.tensors import onednn_off


def gelu(t: torch.Tensor) -> torch.Tensor:
    with onednn_off():
        return F.gelu(t, approximate="none")


def gelu_grad(t: torch.Tensor) -> torch.Tensor:
    with onednn_off():
        t = t.detach().requires_grad_()
        y = F.gelu(t, approximate="none")
        y.backward(torch.ones_like(y))
        return t.grad

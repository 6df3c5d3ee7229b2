"""Adapters between NumPy arrays and torch tensors, shared by every torch-based backend and by
users' torch callables (``--framework torch``). Public: a backend of your own may use them."""
from __future__ import annotations

import numpy as np

from ..formats import BFLOAT16, get_format


def torch_availability(device: str = "cpu") -> tuple[bool, str, str | None]:
    """(available, why not, version text) of torch on ``device``."""
    try:
        import torch
    except ImportError as exc:
        return False, f"torch is not installed ({exc}); pip install 'gelucheck[torch]'", None
    if device == "cuda" and not torch.cuda.is_available():
        return False, "CUDA is not available to torch on this machine", torch.__version__
    return True, "", torch_version_text(device)


def torch_version_text(device: str = "cpu") -> str:
    """torch's version and the kernels it dispatches to: results differ by CPU capability
    (ATEN_CPU_CAPABILITY) and by GPU."""
    import torch

    if device == "cuda":
        return f"{torch.__version__}, {torch.cuda.get_device_name()}"
    return f"{torch.__version__}, CPU {torch.backends.cpu.get_cpu_capability()}"


def to_tensor(x: np.ndarray, device: str = "cpu"):
    """A NumPy array (bfloat16 from ml_dtypes included) as a torch tensor, bit for bit."""
    import torch

    if get_format(x.dtype.name) == BFLOAT16:  # torch cannot read ml_dtypes' bfloat16: bits
        signed = np.ascontiguousarray(x).view(np.int16)
        return torch.from_numpy(signed).view(torch.bfloat16).to(device)
    return torch.from_numpy(np.ascontiguousarray(x)).to(device)


def from_tensor(t) -> np.ndarray:
    import torch

    t = t.detach().cpu()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(BFLOAT16.dtype)
    return t.numpy()


def tensor_kernel(fn, device: str = "cpu"):
    """A NumPy-in, NumPy-out kernel around a torch callable; CUDA work is finished on return."""
    def kernel(x: np.ndarray) -> np.ndarray:
        return from_tensor(fn(to_tensor(x, device)))
    return kernel


def preparer(fn, device: str = "cpu"):
    """For benchmarks: the torch callable and its tensor, so that conversions are not timed."""
    return lambda x: (fn, to_tensor(x, device))


def synchronizer(device: str):
    if device != "cuda":
        return None
    import torch

    return torch.cuda.synchronize


def torch_gradient(fn):
    """The derivative of a torch callable, as its backward pass computes it: the input as a
    leaf that requires grad, fn applied, then backward() with an upstream gradient of ones
    (what a training step does with grad_out = 1). Elementwise fn: the gradient is fn′(x)."""
    import torch

    def gradient(t):
        leaf = t.detach().clone().requires_grad_(True)
        out = fn(leaf)
        out.backward(torch.ones_like(out))
        return leaf.grad

    return gradient

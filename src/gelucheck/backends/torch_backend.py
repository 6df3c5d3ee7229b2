"""PyTorch eager, on the CPU (``torch``) and on CUDA (``torch-cuda``)."""
from __future__ import annotations

import numpy as np

from ..formats import get_format
from .base import Backend, Implementation
from .formulas import phi_erf, phi_erfc


def to_tensor(x: np.ndarray, device: str):
    """A NumPy array (bfloat16 from ml_dtypes included) as a torch tensor, bit for bit."""
    import torch

    fmt = get_format(x.dtype.name)
    if fmt.name == "bfloat16":  # torch cannot read ml_dtypes' bfloat16: go through the bits
        signed = np.ascontiguousarray(x).view(np.int16)
        return torch.from_numpy(signed).view(torch.bfloat16).to(device)
    return torch.from_numpy(np.ascontiguousarray(x)).to(device)


def from_tensor(t) -> np.ndarray:
    import torch

    t = t.detach().cpu()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(get_format("bfloat16").dtype)
    return t.numpy()


def tensor_kernel(fn, device: str):
    """A NumPy-in, NumPy-out kernel around a torch callable; CUDA work is finished on return."""
    def kernel(x: np.ndarray) -> np.ndarray:
        return from_tensor(fn(to_tensor(x, device)))
    return kernel


def preparer(fn, device: str):
    return lambda x: (fn, to_tensor(x, device))


def synchronizer(device: str):
    if device != "cuda":
        return None
    import torch

    return torch.cuda.synchronize


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
    ]


def _availability(device: str) -> tuple[bool, str, str | None]:
    try:
        import torch
    except ImportError as exc:
        return False, f"torch is not installed ({exc}); pip install 'gelucheck[torch]'", None
    if device == "cuda" and not torch.cuda.is_available():
        return False, "CUDA is not available to torch on this machine", torch.__version__
    return True, "", version_text(device)


def version_text(device: str = "cpu") -> str:
    """torch's version and the kernels it dispatches to: results differ by CPU capability
    (ATEN_CPU_CAPABILITY) and by GPU."""
    import torch

    if device == "cuda":
        return f"{torch.__version__}, {torch.cuda.get_device_name()}"
    return f"{torch.__version__}, CPU {torch.backends.cpu.get_cpu_capability()}"


def load(device: str = "cpu") -> Backend:
    name = "torch" if device == "cpu" else "torch-cuda"
    ok, reason, version = _availability(device)
    if not ok:
        return Backend(name, False, reason, version)
    impls = tuple(Implementation(name, impl, function, tensor_kernel(fn, device), device=device,
                                 description=text, prepare=preparer(fn, device),
                                 synchronize=synchronizer(device))
                  for impl, function, fn, text in torch_functions())
    return Backend(name, True, "", version, impls)


def load_cuda() -> Backend:
    return load("cuda")

"""Adapters between NumPy arrays and torch tensors, shared by every torch-based backend and by
users' torch callables (``--framework torch``). Public: a backend of your own may use them."""
from __future__ import annotations

import math
import os
import re
from collections.abc import Callable
from contextlib import contextmanager

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
    """torch's version and, on the CPU, the MKL release (its erf and erfc: the bound documented
    for them) and the kernel tier it runs on (tiers.torch_tier: ATen's capability, oneDNN's
    and MKL's code paths, the CPU); on CUDA, the GPU."""
    import torch

    from .. import tiers

    if device == "cuda":
        return f"{torch.__version__}, {torch.cuda.get_device_name()}"
    text = str(torch.__version__)
    if torch.backends.mkl.is_available():
        text += f", {mkl_release(torch.__config__.show())}"
    return f"{text}, kernels {tiers.torch_tier()}"


def mkl_release(build_config: str) -> str:
    """'MKL 2024.2' from torch's build configuration, or 'MKL' where it names no release."""
    found = re.search(r"Math Kernel Library Version (\d+(?:\.\d+)*)", build_config)
    return f"MKL {found[1]}" if found else "MKL"


def to_tensor(x: np.ndarray, device: str = "cpu"):
    """A NumPy array (bfloat16 from ml_dtypes included) as a torch tensor, bit for bit."""
    import torch

    x = x if x.flags.c_contiguous else x.copy()  # (a 0-d array stays 0-d)
    if get_format(x.dtype) == BFLOAT16:  # torch cannot read ml_dtypes' bfloat16: bits
        return torch.from_numpy(x.view(np.int16)).view(torch.bfloat16).to(device)
    return torch.from_numpy(x).to(device)


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
        leaf = t.detach().requires_grad_(True)  # a view keeps its layout: no clone
        out = fn(leaf)
        out.backward(torch.ones_like(out))
        return leaf.grad

    return gradient


@contextmanager
def onednn_off():
    """torch's own CPU kernels where it would hand a tensor to oneDNN's (exact GELU on a
    contiguous float32 or bfloat16 tensor, forward and backward: torch.backends.mkldnn, on
    by default), then oneDNN back as it was. By the attribute: mkldnn.flags() also sets
    oneDNN's TF32 switch, with a warning on every call."""
    import torch

    enabled = torch.backends.mkldnn.enabled
    torch.backends.mkldnn.enabled = False  # type: ignore[assignment]  # (torch's stub: a property)
    try:
        yield
    finally:
        torch.backends.mkldnn.enabled = enabled


def torch_layout_paths(fn, device: str = "cpu") -> Callable:
    """The layouts a torch tensor can arrive in, each built on the tensor side and handed to
    ``fn`` as it is (checks.consistency): a stride-2 view, a transposed 2-D view, a
    channels-last 4-D tensor, a view at storage offset 1, shapes (n, 1), (n, 7), (n, 3, 5)
    and a stride-0 broadcast, and on the CPU the bulk with one thread and without oneDNN."""
    import torch

    def read(out, n):
        return from_tensor(out.reshape(-1)[:n])

    def strided(t):
        return fn(t.repeat_interleave(2)[::2])

    def transposed(t):
        n, cols = t.numel(), 7
        rows = -(-n // cols)
        base = torch.empty(rows, cols, dtype=t.dtype, device=t.device)
        view = base.t()  # (cols, rows), not contiguous
        padded = torch.cat([t, t[:1].expand(rows * cols - n)]) if n < rows * cols else t
        view.copy_(padded.reshape(cols, rows))
        return fn(view)

    def channels_last(t):
        n, block = t.numel(), 3 * 4 * 4
        k = -(-n // block)
        padded = torch.cat([t, t[:1].expand(k * block - n)]) if n < k * block else t
        return fn(padded.reshape(k, 3, 4, 4).contiguous(memory_format=torch.channels_last))

    def offset(t):
        return fn(torch.cat([t[:1], t])[1:])

    def shaped(*tail):
        """Contiguous, of shape (-1, *tail), padded with x[0]: the shapes a compiler
        specialises on (an innermost dimension of 1 or of an odd size, a 3-D tensor)."""
        def run(t):
            n, block = t.numel(), math.prod(tail)
            padded = torch.cat([t, t[:1].expand(-n % block)])
            return fn(padded.reshape(-1, *tail))
        return run

    def broadcast(t):
        """Each input repeated along a stride-0 dimension (an expanded tensor, never copied):
        the last column is read back."""
        return fn(t.reshape(-1, 1).expand(-1, 4))[:, -1]

    def one_thread(t):
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            return fn(t)
        finally:
            torch.set_num_threads(threads)

    def without_onednn(t):
        with onednn_off():
            return fn(t)

    def separately(t, length):
        """Arrays of exactly ``length`` (0-d tensors for length 0), each a fresh tensor of
        its own - a new allocation, like a user's small tensor - one call each."""
        if length == 0:
            return torch.stack([fn(t[i].clone()) for i in range(t.numel())])
        n = t.numel()
        t = torch.cat([t, t[:1].expand(-n % length)])  # every array exactly ``length`` long
        return torch.cat([fn(t[i:i + length].clone()) for i in range(0, t.numel(), length)])[:n]

    def paths(fmt):
        from ..checks.padded_rows import MAX_LENGTH

        runs = {"stride-2": strided, "transposed": transposed,
                "channels-last": channels_last, "storage-offset": offset,
                "inner-1": shaped(1), "inner-7": shaped(7), "3-d": shaped(3, 5),
                "broadcast": broadcast,
                "one-element": lambda t: separately(t, 1), "0-d": lambda t: separately(t, 0)}
        runs.update({f"length-{n}": (lambda t, n=n: separately(t, n))
                     for n in range(2, MAX_LENGTH[fmt.name] + 1)})
        if device == "cpu":
            runs["1-thread"] = one_thread
            runs["without-onednn"] = without_onednn
        return {name: (lambda x, run=run: read(run(to_tensor(x, device)), len(x)))
                for name, run in runs.items()}

    return paths


def torch_compile(fn, dynamic: bool):
    """torch.compile(fn), set up so that it never falls back to eager silently, made on its
    first call: importing Dynamo costs seconds, which a process that only lists or selects
    the implementations (the pytest plugin's collection) need not pay.

    Dynamo keeps one cache per code object: both forms x 4 dtypes x forward/backward are 16
    specialisations of one lambda, past the default limit of 8, after which it would run
    eager *silently*; the call paths of `consistency` (0-d, one element, strided, transposed,
    channels-last) multiply them, past 64 in one process of the pytest suite. Allow them
    all, and make any further recompile an error (reported as that implementation's) rather
    than a quiet fallback to eager kernels."""
    compiled: list[Callable] = []

    def call(*args, **kwargs):
        if not compiled:
            compiled.append(_compile(fn, dynamic))
        return compiled[0](*args, **kwargs)

    return call


def inductor_cache_dir(current: str | None, temp: str, version: str, level: str) -> str:
    """Inductor's on-disk cache keyed by torch's release and ATen's CPU capability: shared
    across capabilities, a kernel compiled for AVX-512 was loaded under
    ATEN_CPU_CAPABILITY=avx2 and gave wrong values, then heap corruption
    (docs/repro/inductor_cache_across_capabilities.py). Inside the folder already named
    (the user's, or torch's default, which Inductor writes into the environment once anything
    imports it: importing timm does), never instead of it; beside the key a parent process
    (another kernel tier) left there."""
    key = f"gelucheck-inductor-{version}-{level}"
    if current is None:
        return os.path.join(temp, key)
    current = os.path.normpath(current)
    if os.path.basename(current).startswith("gelucheck-inductor-"):  # a parent process's key
        return os.path.join(os.path.dirname(current), key)
    return os.path.join(current, key)


def _compile(fn, dynamic: bool):
    import tempfile

    import torch

    os.environ["TORCHINDUCTOR_CACHE_DIR"] = inductor_cache_dir(
        os.environ.get("TORCHINDUCTOR_CACHE_DIR"), tempfile.gettempdir(), torch.__version__,
        torch.backends.cpu.get_cpu_capability())
    dynamo = torch._dynamo.config
    dynamo.recompile_limit = max(dynamo.recompile_limit, 256)
    dynamo.accumulated_recompile_limit = max(dynamo.accumulated_recompile_limit, 1024)
    dynamo.fail_on_recompile_limit_hit = True
    return torch.compile(fn, dynamic=dynamic)

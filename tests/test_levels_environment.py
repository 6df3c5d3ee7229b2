"""What a CPU dispatch level sets (levels.environment): torch's kernels and the oneDNN kernels
it hands some tensors to, both capped - ATEN_CPU_CAPABILITY alone left oneDNN's GELU at
AVX-512 under the label avx2."""
import subprocess
import sys

import pytest

from gelucheck import levels

# oneDNN names the kernel it ran: "...,eltwise,jit:avx2,forward_training,..."
_GELU_KERNEL = """
import torch, torch.nn.functional as F
F.gelu(torch.ones(100))
"""


def test_the_default_level_caps_nothing(monkeypatch):
    monkeypatch.setenv("ATEN_CPU_CAPABILITY", "avx2")
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "AVX2")
    env = levels.environment(levels.DEFAULT)
    assert "ATEN_CPU_CAPABILITY" not in env and "ONEDNN_MAX_CPU_ISA" not in env


@pytest.mark.slow  # torch in a child process at another CPU capability: seconds
def test_at_avx2_torch_s_gelu_runs_onednn_s_avx2_kernel():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    if torch.backends.cpu.get_cpu_capability() not in ("AVX2", "AVX512"):
        pytest.skip("not an x86 machine with AVX2")
    if not torch.backends.mkldnn.is_available():
        pytest.skip("this torch has no oneDNN")
    env = {**levels.environment("avx2"), "ONEDNN_VERBOSE": "1"}
    done = subprocess.run([sys.executable, "-c", _GELU_KERNEL], capture_output=True, text=True,
                          env=env, check=True)
    kernels = [line for line in done.stdout.splitlines() if ",eltwise," in line]
    assert kernels and all(",jit:avx2," in line for line in kernels), done.stdout[-2000:]

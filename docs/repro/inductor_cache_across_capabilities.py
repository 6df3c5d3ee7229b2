"""Reproducer: torch inductor's on-disk cache shared across CPU capabilities.

Run twice with the same TORCHINDUCTOR_CACHE_DIR, first at the default capability, then
under ATEN_CPU_CAPABILITY=avx2 (on an AVX-512 machine):

    export TORCHINDUCTOR_CACHE_DIR=$(mktemp -d)
    python docs/repro/inductor_cache_across_capabilities.py
    ATEN_CPU_CAPABILITY=avx2 python docs/repro/inductor_cache_across_capabilities.py

Seen with torch 2.13.0 CPU: the second run prints max |compiled - eager| = nan (a kernel built
for AVX-512 loaded under AVX2); with a cache folder per capability - what gelucheck does
(gelucheck.backends.tensors.torch_compile) - both print about 7e-7.
"""
import os

import torch
import torch.nn.functional as F

compiled = torch.compile(lambda t: F.gelu(t), dynamic=True)
x = torch.linspace(0.1, 3, 1000)
print(f"capability {torch.backends.cpu.get_cpu_capability()}, cache "
      f"{os.environ.get('TORCHINDUCTOR_CACHE_DIR', '(default)')}: max |compiled - eager| = "
      f"{(compiled(x) - F.gelu(x)).abs().max().item()}")

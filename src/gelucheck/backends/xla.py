"""What XLA compiles for: the host CPU's instructions unless capped (``--xla_cpu_max_isa`` in
XLA_FLAGS), and results differ by it, so the version that identifies JAX's and TensorFlow's
results names the cap."""
from __future__ import annotations

import os

FLAG = "--xla_cpu_max_isa="


def cap_text() -> str:
    """", XLA up to AVX2" where XLA_FLAGS caps XLA's CPU code (the last such flag wins, as in
    XLA); "" where it compiles for the host."""
    caps = [f.removeprefix(FLAG) for f in os.environ.get("XLA_FLAGS", "").split()
            if f.startswith(FLAG)]
    return f", XLA up to {caps[-1]}" if caps else ""

"""The kernels tier (marker ``kernels``, tox -e kernels, CI): the default run's items of each
backend whose figures depend on the CPU's kernels, measured at the AVX2 tier and at this CPU's
native kernels, each in a pytest run of its own (the caps are read when the library loads),
each green against its own tier's budgets. A tier with no budget fails by name (judge: no
budget for kernel tier ...). torch runs here; JAX and TensorFlow in their tox envs."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gelucheck import budgets, tiers

ROOT = Path(__file__).resolve().parents[1]
# the library each backend needs, and how a process names the tier it runs on
BACKENDS = {"torch": ("torch", "torch_tier"), "jax": ("jax", "xla_tier"),
            "tensorflow": ("tensorflow", "xla_tier")}


def _tier_of(backend: str, tier: str) -> str:
    probe = BACKENDS[backend][1]
    done = subprocess.run([sys.executable, "-c", f"from gelucheck import tiers; "
                           f"print(tiers.{probe}().name)"], capture_output=True, text=True,
                          env=tiers.environment(tier), check=True)
    return done.stdout.split()[-1]


@pytest.mark.kernels
@pytest.mark.parametrize("tier", ["avx2", "native"])
@pytest.mark.parametrize("backend", list(BACKENDS))
def test_the_items_hold_on_the_tier_they_run_on(backend, tier):
    pytest.importorskip(BACKENDS[backend][0], reason=f"{backend} is not installed")
    if tier not in tiers.reachable():
        pytest.skip(f"this CPU cannot run the {tier} tier")
    name = _tier_of(backend, tier)
    recorded = budgets.load().tiers(backend) or {}
    assert name in recorded, (f"{backend} runs on kernel tier {name} here, which gelucheck's "
                              f"budgets do not record (recorded: {', '.join(recorded)})")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-n", "2",
         "tests/test_accuracy.py", "--gelucheck-backend", backend,
         "--gelucheck-kernel-tier", tier],
        cwd=ROOT, capture_output=True, text=True)
    last = done.stdout.strip().splitlines()[-1]
    assert done.returncode == 0, done.stdout[-4000:]
    assert re.search(r"\b[1-9]\d* passed", last), last
    assert not re.search(r"\d+ (failed|error)", last), last

"""reference.warm loads every compiled loop a sweep of the function calls, for writable and
read-only outputs: a worker that loaded one inside a task paid numba's disk cache in a timed
block - or, after an install, compiled it there, seconds in every worker."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("numba", reason="the compiled loops are numba's")

# In a fresh process (numba's dispatchers load per process): warm the function's loops, then
# evaluate a short block at the start of every binade of both signs - every part of the
# reference, the closed forms and the replays, and for a mirrored reference each positive
# block with its mirror - and print the loops that gained a signature.
_WARM_THEN_SWEEP = """
import json, sys
from numba.core.registry import CPUDispatcher
from gelucheck.backends import find, load_user
from gelucheck.sweep import chunk, erf_kernels, kernels, reference

def loaded():
    seen = {}
    for module in (kernels, erf_kernels):
        for name, value in vars(module).items():
            for key, f in (value.items() if isinstance(value, dict) else [("", value)]):
                if isinstance(f, CPUDispatcher):
                    seen[f"{module.__name__}.{name}{key}"] = len(f.signatures)
    return seen

function, spec = sys.argv[1:]
impls = find(spec) if spec.startswith("libm:") else [load_user(spec, function)]
reference.warm([function])
before = loaded()
for start in range(0, 1 << 32, 1 << 23):
    for a, b in chunk.finite_ranges(start, start + 256):
        chunk.evaluate(impls, function, a, b)
if reference.spec(chunk.get_function(function)).mirrored:  # a job and its mirror's test
    for start in range(0, 0x7F800000, 1 << 23):
        chunk.evaluate_job(impls, function, ((start, start + 256),
                                             (start | 1 << 31, (start + 256) | 1 << 31)))
print(json.dumps(sorted(k for k, n in loaded().items() if n != before.get(k))))
"""


@pytest.mark.parametrize(("function", "spec"), [
    ("erf", "libm:erff"), ("erfc", "libm:erfcf"), ("gelu", "sweep_impls:rounded_gelu"),
    # outputs NumPy may not write to (JAX's): the comparison's, the replay's and the closed
    # forms' loops for read-only arrays; errors of 4 ulps and more, binned one by one
    ("erf", "sweep_impls:erf_scipy_once_read_only"), ("erf", "sweep_impls:erf_as_x_read_only"),
    # one ulp off at every 7th input: the closed forms' parts measured in float64 too
    ("phi_grad", "sweep_impls:off_phi_grad"), ("gelu_tanh_grad", "sweep_impls:off_gelu_tanh_grad"),
    ("gelu", "sweep_impls:off_gelu")])
def test_warm_leaves_no_loop_to_load_inside_a_task(function, spec):
    tests = str(Path(__file__).parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [tests, *filter(None, [os.environ.get("PYTHONPATH")])])}
    done = subprocess.run([sys.executable, "-c", _WARM_THEN_SWEEP, function, spec], env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == []

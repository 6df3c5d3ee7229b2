"""The exhaustive sweep's per-chunk kernel: the reference alone, and the reference with one
implementation checked against it, on 2^16 encodings from each kind of region."""
import contextlib

import numpy as np
import pytest

from gelucheck.backends import find, get_backend
from gelucheck.sweep import chunk, loops, reference, worker

BLOCK = 1 << 16
REGIONS = {"tiny": 0x10000000, "middle": 0x3F000000, "middle-negative": 0xC0000000,
           "saturated": 0x50000000}


@pytest.fixture(scope="module", autouse=True)
def _tuned():
    with contextlib.suppress(ImportError):  # first: _tune_process sets a loaded torch's threads
        import torch  # noqa: F401
    worker._tune_process()  # as sweep workers are


@pytest.mark.parametrize("region", REGIONS)
@pytest.mark.parametrize("function", ["phi", "gelu", "gelu_tanh"])
def test_reference_kernel(benchmark, region, function):
    x = np.arange(REGIONS[region], REGIONS[region] + BLOCK, dtype=np.uint32).view(np.float32)
    benchmark.group = f"sweep reference {region}"
    benchmark(reference.values, function, x)
    benchmark.extra_info["inputs_per_s"] = BLOCK / benchmark.stats.stats.median


@pytest.mark.parametrize("region", REGIONS)
def test_chunk_kernel_with_torch_gelu(benchmark, region):
    if not get_backend("torch").available:
        pytest.skip(f"backend torch: {get_backend('torch').reason}")
    impls = find("torch:F.gelu", "gelu")
    start = REGIONS[region]
    benchmark.group = f"sweep chunk {region}"
    benchmark(chunk.evaluate, impls, "gelu", start, start + BLOCK)
    benchmark.extra_info["inputs_per_s"] = BLOCK / benchmark.stats.stats.median


@pytest.mark.parametrize("first", ["a number", "NaN"])
def test_score_kernel(benchmark, first):
    """The comparison's pass alone (kernels.score) on 2^18 outputs of the middle, every
    seventh one ulp off: a block whose first output is a number takes the pass that assumes
    numbers, one whose first is NaN the pass that tests each (each a loop of its own; a
    variable flag once slowed the first by half, which the chunk's figures hid)."""
    compiled = loops.kernels()
    if compiled is None:
        pytest.skip("numba is not installed (extra: fast): the comparison is NumPy's")
    start, n = 0x3F000000, 1 << 18
    x = np.arange(start, start + n, dtype=np.uint32).view(np.float32)
    v, unit, _ = reference.values("gelu", x, monotone=True)
    y = v.astype(np.float32)
    y[::7] = np.nextafter(y[::7], np.float32(np.inf))
    if first == "NaN":
        y[0] = np.nan
    benchmark.group = "sweep score"
    benchmark(compiled.score, y, v, unit)
    benchmark.extra_info["inputs_per_s"] = n / benchmark.stats.stats.median

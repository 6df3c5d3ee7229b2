"""Shared by tests/ and tests/benchmarks/. The gelucheck plugin itself loads through its
``pytest11`` entry point, as it does for users of the installed package."""
import os
from pathlib import Path

# The budgets of torch's CPU kernels were measured where MKL (torch's erf and erfc, hence its
# exact GELU and Φ in float32/float64) took its SSE4.2 code path and oneDNN (its GELU) used
# AVX-512 up to the BF16 extension. On a CPU with more (AVX-512 FP16, AMX) both pick other
# kernels by default, with other figures (docs/findings/torch-2.13-cpu.md): the tests cap them,
# so that the budgets hold for the same kernels on every x86 machine with AVX-512 BF16 (docs/
# budgets.md). The libraries read these when first used, after this; a caller's value is kept.
os.environ.setdefault("MKL_ENABLE_INSTRUCTIONS", "SSE4_2")
os.environ.setdefault("ONEDNN_MAX_CPU_ISA", "AVX512_CORE_BF16")
# XLA (JAX, TensorFlow's jit_compile) compiles for the host CPU: its budgets were recorded
# with the code it generates for AVX2, which a cap gives back on CPUs with more.
if "--xla_cpu_max_isa" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} --xla_cpu_max_isa=AVX2".strip()

import mpmath  # noqa: E402
import pytest  # noqa: E402

pytest_plugins = ["pytester"]
BENCHMARKS = Path(__file__).parent / "tests" / "benchmarks"


def pytest_ignore_collect(collection_path, config):
    """Benchmarks run only when asked for by path: the default run stays fast and quiet."""
    if collection_path == BENCHMARKS:
        asked = any(BENCHMARKS == Path(a.split("::")[0]).resolve()
                    or BENCHMARKS in Path(a.split("::")[0]).resolve().parents
                    for a in config.args)
        return not asked
    return None


@pytest.fixture(autouse=True)
def _restore_mpmath_precision():
    """Tests may raise mp.dps; keep it from leaking into the next test."""
    prec = mpmath.mp.prec
    yield
    mpmath.mp.prec = prec


@pytest.fixture(params=["compiled", "numpy"])
def sweep_path(request, monkeypatch):
    """The sweep's compiled loops (numba, the fast extra), or the NumPy and SciPy passes that
    stand in without numba: both must hold their bounds and give the same figures."""
    from gelucheck.sweep import loops

    if request.param == "numpy":
        monkeypatch.setattr(loops, "kernels", lambda: None)
    elif loops.kernels() is None:
        pytest.skip("numba is not installed (pip install 'gelucheck[fast]'): no compiled loops")
    return request.param

"""Shared by tests/ and tests/benchmarks/. The gelucheck plugin itself loads through its
``pytest11`` entry point, as it does for users of the installed package."""
# The libraries' CPU kernels are capped at the AVX2 tier by the gelucheck plugin, before any
# test loads them (pyproject.toml's addopts: --gelucheck-kernel-tier=avx2), so that the
# default run gives the same verdicts on every x86-64 CPU with AVX2 (docs/budgets.md).
from pathlib import Path

import mpmath
import pytest

pytest_plugins = ["pytester"]
BENCHMARKS = Path(__file__).parent / "tests" / "benchmarks"


def pytest_ignore_collect(collection_path, config):
    """Benchmarks run only when asked for by path: the default run stays fast and quiet."""
    if collection_path == BENCHMARKS:
        asked = any(Path(a.split("::")[0]).resolve() == BENCHMARKS
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

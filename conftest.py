"""Shared by tests/ and tests/benchmarks/. The gelucheck plugin itself loads through its
``pytest11`` entry point, as it does for users of the installed package."""
import mpmath
import pytest


@pytest.fixture(autouse=True)
def _restore_mpmath_precision():
    """Tests may raise mp.dps; keep it from leaking into the next test."""
    prec = mpmath.mp.prec
    yield
    mpmath.mp.prec = prec


pytest_plugins = ["pytester"]

"""Benchmarks stay out of the default run (``--benchmark-skip`` in pyproject) and run with
``pytest tests/benchmarks --benchmark-only`` or ``tox -e bench``."""
import pathlib

import pytest


def pytest_configure(config):
    """--benchmark-compare with nothing saved: say how to save a run, instead of a traceback."""
    if not getattr(config.option, "benchmark_compare", None):
        return
    storage = pathlib.Path(str(config.getoption("benchmark_storage")).replace("file://", ""))
    if not any(storage.glob("*/*.json")):
        raise pytest.UsageError(
            f"no saved benchmark run in {storage}: make one first with "
            "`tox -e bench` (or `pytest tests/benchmarks --benchmark-only "
            "--benchmark-autosave`), then compare against it")

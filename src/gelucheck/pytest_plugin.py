"""The gelucheck pytest plugin (registered through the ``pytest11`` entry point)."""
from __future__ import annotations


def pytest_addoption(parser):
    group = parser.getgroup("gelucheck")
    group.addoption("--reference-dir", default=None,
                    help="folder of the reference data (default: $GELUCHECK_REFERENCE or the "
                         "checkout's reference/)")


def pytest_configure(config):
    import os

    directory = config.getoption("--reference-dir", default=None)
    if directory:
        os.environ["GELUCHECK_REFERENCE"] = directory

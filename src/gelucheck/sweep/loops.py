"""The sweep's compiled loops (sweep/kernels.py), loaded once where numba is installed: the one
seam every part of the sweep asks, so that a test can take them away."""
from __future__ import annotations

from functools import cache


@cache
def kernels():
    """The compiled loops (sweep/kernels.py) where numba is installed (the ``fast`` extra),
    else None: NumPy and SciPy then do the same, slower (docs/design.md, The sweep)."""
    try:
        from . import kernels as compiled
    except ImportError:
        return None
    return compiled


def erf_kernels():
    """The compiled loops of erf's and erfc's reference (sweep/erf_kernels.py), where
    kernels() has numba; else None (the erf family's sweep has no NumPy path)."""
    return None if kernels() is None else _erf_module()


@cache
def _erf_module():
    """erf_kernels' module, imported once (the import statement had run at each call,
    several a block)."""
    from . import erf_kernels as compiled

    return compiled

"""The mechanism behind a search's worst case: the defect signatures (gelucheck.signatures) of
the implementation on the consecutive float64 inputs around the worst input, every one of them
scored against mpmath's correctly rounded value. A search's candidates are scattered over the
line, which the detectors cannot read (a turn back needs neighbours, a low precision or a bias
many inputs of one stretch); the worst input's own stretch is dense, and it is where the
defect that matters most shows."""
from __future__ import annotations

import numpy as np

from .. import signatures
from ..backends import Implementation
from ..checks.reference_data import exacts_of
from ..errors import ImplementationError
from ..formats import FLOAT64
from ..reference.mpref import correctly_rounded
from ..results import Signature
from ..ulp import ulp_error

SIDE = 1024  # encodings on each side of the worst input
LARGEST = 0x7FEFFFFFFFFFFFFF  # the largest finite double's magnitude bits


def around(x: float, side: int = SIDE) -> np.ndarray:
    """The float64 inputs of x's sign whose magnitudes are the ``side`` encodings below and
    above |x|'s (fewer at zero and at the largest double), ascending in magnitude."""
    bits = int(np.float64(abs(x)).view(np.uint64))
    lo, hi = max(bits - side, 0), min(bits + side, LARGEST)
    magnitudes = np.arange(lo, hi + 1, dtype=np.uint64).view(np.float64)
    return -magnitudes if np.signbit(x) else magnitudes


def diagnose(impl: Implementation, x: float) -> list[Signature] | None:
    """The signatures of ``impl`` around ``x`` ([] where it shows none); None where the
    implementation fails there (the search reports its failure)."""
    function = impl.function
    xs = around(x)
    try:
        y = impl(xs)
    except ImplementationError:
        return None
    exact = exacts_of([correctly_rounded(function, float(v), FLOAT64) for v in xs], FLOAT64)
    errors = ulp_error(y, exact, FLOAT64)
    # the exact values as float64: their correct rounding, as the stored float64 data has it
    return signatures.diagnose(function, FLOAT64, xs, y, exact.rounded, exact.rounded, errors)

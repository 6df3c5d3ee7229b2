"""The inputs whose fast float64 value lies too close to a float32 rounding boundary for its
bound: their correctly rounded results proven by Arb (python-flint) where installed, else
by mpmath's Ziv loop (docs/design.md, The sweep)."""
from __future__ import annotations

import math
from functools import cache

import numpy as np

from ..formats import FLOAT32, FLOAT64
from ..functions import Function
from ..reference import arbref
from ..reference.mpref import correctly_rounded


def resolve_all(function: Function, x: np.ndarray, slow: np.ndarray, v: np.ndarray,
                 unit: np.ndarray) -> None:
    """v and unit at the inputs x[slow], from their correctly rounded results."""
    for i in slow:
        bits, bits64, side = resolve(function, float(x[i]))
        v[i] = float(FLOAT64.from_bits(bits64))
        rounded = float(FLOAT32.from_bits(bits))
        unit[i] = FLOAT32.ulp_of(np.array([rounded]))[0] * (0.5 if below_power(rounded, side)
                                                         else 1.0)
        if abs(v[i] - rounded) == unit[i] / 2:  # a float64 on the midpoint: keep the side
            v[i] = math.nextafter(v[i], rounded)
        elif v[i] == rounded:  # on the float32 itself: keep the side (mpmath's residual
            # may be a signed zero), so that an output k ulps away errs by more or less than k
            v[i] = math.nextafter(v[i], math.copysign(math.inf, side))


@cache
def arb_installed() -> bool:
    return arbref.available()


def warm_proofs() -> None:
    """Import Arb (python-flint), if installed, before any block is timed: its first import
    would otherwise count as the reference time of the block with the first
    close call - most of it, in a sweep of a few blocks."""
    arb_installed()


def resolve(function: Function, x: float) -> tuple[int, int, float]:
    """(float32 encoding, float64 encoding, side of the exact value: its sign against the
    float32) where the float64 formula is too close to call: Arb's proven ball where
    python-flint is installed (the faster), else mpmath's Ziv loop - the same answer."""
    if arb_installed():
        proven = arbref.rounded(function, x, FLOAT32)
        if proven is not None:
            return proven
    r = correctly_rounded(function, x, FLOAT32)
    return r.bits, r.float64_bits, r.residual


def below_power(rounded: float, side: float) -> bool:
    """The exact value lies just inside the binade below the power of two it rounded to."""
    return (abs(math.frexp(rounded)[0]) == 0.5 and abs(rounded) > FLOAT32.smallest_normal
            and math.copysign(1.0, side) * math.copysign(1.0, rounded) < 0)

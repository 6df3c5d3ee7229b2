"""The inputs whose fast float64 value lies too close to a float32 rounding boundary for its
bound: their correctly rounded results read from the table of those proven before
(proof_table), else proven by Arb (python-flint) where installed, else by mpmath's Ziv loop
(docs/design.md, The sweep)."""
from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache

import numpy as np

from ..formats import FLOAT32, FLOAT64
from ..functions import Function
from ..reference import arbref
from ..reference.mpref import correctly_rounded
from . import proof_table

Proof = tuple[int, int, float]  # resolve's: float32 and float64 encodings, side
# where set (afresh), every input is proven again and recorded here, the table unread
_afresh: list[tuple[str, float, Proof]] | None = None


def resolve_all(function: Function, x: np.ndarray, slow: np.ndarray, v: np.ndarray,
                 unit: np.ndarray) -> None:
    """v and unit at the inputs x[slow], from their correctly rounded results."""
    for i, (bits, bits64, side) in zip(slow, _proofs(function, x[slow])):
        v[i] = float(FLOAT64.from_bits(bits64))
        rounded = float(FLOAT32.from_bits(bits))
        unit[i] = FLOAT32.ulp_of(np.array([rounded]))[0] * (0.5 if below_power(rounded, side)
                                                         else 1.0)
        if abs(v[i] - rounded) == unit[i] / 2:  # a float64 on the midpoint: keep the side
            v[i] = math.nextafter(v[i], rounded)
        elif v[i] == rounded:  # on the float32 itself: keep the side (mpmath's residual
            # may be a signed zero), so that an output k ulps away errs by more or less than k
            v[i] = math.nextafter(v[i], math.copysign(math.inf, side))


def _proofs(function: Function, x: np.ndarray) -> Iterator[Proof]:
    """resolve's answer for each input x: the table's where it holds the input."""
    stored = proof_table.entries(function.name) if _afresh is None and len(x) else None
    encodings = proof_table.encodings_of(x) if stored is not None else None
    found = np.full(len(x), -1)
    if stored is not None and encodings is not None:
        found = stored.find(encodings)
    for j, xk in zip(found, x):
        if stored is not None and j >= 0:
            yield int(stored.bits[j]), int(stored.bits64[j]), float(stored.side[j])
        else:
            proof = resolve(function, float(xk))
            if _afresh is not None:
                _afresh.append((function.name, float(xk), proof))
            yield proof


@contextmanager
def afresh() -> Iterator[list[tuple[str, float, Proof]]]:
    """Every input in doubt proven again, not read from the table, and listed as (function,
    x, resolve's answer): the table's own making, and tests of what it replaces."""
    global _afresh
    before, _afresh = _afresh, []
    try:
        yield _afresh
    finally:
        _afresh = before


@cache
def arb_installed() -> bool:
    return arbref.available()


def warm_proofs() -> None:
    """Import Arb (python-flint), if installed, and load the table of proven inputs before
    any block is timed: the first import would otherwise count as the reference time of the
    block with the first close call - most of it, in a sweep of a few blocks."""
    arb_installed()
    proof_table.table()


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

"""The inputs whose fast float64 value lies too close to a float32 rounding boundary for its
bound: their correctly rounded results read from the table of those proven before
(proof_table), else proven by Arb (python-flint) where installed, else by mpmath's Ziv loop
(docs/design.md, The sweep)."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache

import numpy as np

from ..formats import FLOAT32
from ..functions import Function
from ..reference import arbref
from ..reference.mpref import correctly_rounded
from ..ulp import ulp_of_exact
from . import proof_table

Proof = tuple[int, int, float]  # resolve's: float32 and float64 encodings, side
# where set (afresh), every input is proven again and recorded here, the table unread
_afresh: list[tuple[str, float, Proof]] | None = None


def resolve_all(function: Function, x: np.ndarray, slow: np.ndarray, v: np.ndarray,
                unit: np.ndarray) -> None:
    """v and unit at the inputs x[slow], from their correctly rounded results (_values):
    the stored proofs' already made where the table holds every one of them, as it does in
    nearly every block (_Stored: resolving a block's few inputs in NumPy's calls cost more
    than the block's reference loop), else each proven."""
    if not len(slow):
        return
    x = x[slow]
    if (stored := _stored(function)) is not None and (at := stored.entries(x)) is not None:
        v[slow], unit[slow] = stored.v[at], stored.unit[at]
        return
    v[slow], unit[slow] = _values(*_proofs(function, x))


def _values(bits: np.ndarray, bits64: np.ndarray, side: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray]:
    """(v, unit) of proofs (float32 and float64 encodings, side): v the float64's, moved one
    step to the exact value's side where it is the float32 itself or its midpoint; unit the
    float32's ulp, half of it just below a power of two."""
    value, rounded = bits64.view(np.float64), bits.view(np.float32).astype(np.float64)
    ulp = ulp_of_exact(rounded, side, FLOAT32)
    midpoint = np.abs(value - rounded) == ulp / 2  # a float64 on the midpoint: keep the side
    # on the float32 itself: keep the side (mpmath's residual may be a signed zero), so that
    # an output k ulps away errs by more or less than k
    toward = np.where(midpoint, rounded, np.copysign(np.inf, side))
    moved = midpoint | (value == rounded)
    return np.where(moved, np.nextafter(value, toward), value), ulp


class _Stored:
    """One function's table of proofs as resolve_all's v and unit, made once (_values over
    the whole table), and its inputs' encodings as a dict: a block's lookup is a few dict
    reads instead of NumPy's searchsorted and a dozen array passes."""

    def __init__(self, proven: proof_table.Proven):
        self.proven = proven
        self.v, self.unit = _values(proven.bits, proven.bits64, proven.side.astype(np.float64))
        self._at = {int(e): j for j, e in enumerate(proven.x)}

    def entries(self, x: np.ndarray) -> list[int] | None:
        """The entries of the inputs x (float32, or their float64 copies); None where one
        is no float32 or not in the table."""
        encodings = proof_table.encodings_of(x)
        if encodings is None:
            return None
        at = [self._at.get(e, -1) for e in encodings.tolist()]
        return None if min(at) < 0 else at


_stored_by_function: dict[str, _Stored] = {}


def _stored(function: Function) -> _Stored | None:
    """The function's _Stored, made again where the table was read again (a file rewritten);
    None where it has no entries, or where every input is to be proven afresh."""
    if _afresh is not None or (proven := proof_table.entries(function.name)) is None:
        return None
    held = _stored_by_function.get(function.name)
    if held is None or held.proven is not proven:
        held = _stored_by_function[function.name] = _Stored(proven)
    return held


def _proofs(function: Function, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """resolve's answers for the inputs x, as arrays (float32 and float64 encodings, side):
    the table's where it holds the input."""
    bits, bits64, side = np.empty(len(x), np.uint32), np.empty(len(x), np.uint64), np.empty(len(x))
    found = np.full(len(x), -1)
    stored = proof_table.entries(function.name) if _afresh is None else None
    if stored is not None and (encodings := proof_table.encodings_of(x)) is not None:
        found = stored.find(encodings)
        held, j = found >= 0, found[found >= 0]
        bits[held], bits64[held], side[held] = stored.bits[j], stored.bits64[j], stored.side[j]
    for k in np.flatnonzero(found < 0):
        proof = resolve(function, float(x[k]))
        bits[k], bits64[k], side[k] = proof
        if _afresh is not None:
            _afresh.append((function.name, float(x[k]), proof))
    return bits, bits64, side


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

"""Blocks scored by replaying the same block of an earlier binade (docs/design.md, The sweep of
erf and erfc). Where a function's reference is exactly scale-invariant by binade below
``SweepSpec.scaled_below`` (erf: v = 2x/√π in float64, whose product scales by a power of two
exactly; unit and the doubt test read v's exponent and fraction apart), an implementation
whose outputs at m·2^e are, encoding for encoding, its outputs at m·2^e0 with the exponent
raised by e - e0 makes the same errors in ulps at the same positions: |y - v| and the unit
both scale by 2^(e - e0). The block's figures are then the earlier block's - sums in the
same order, the same counts and histogram -, its encodings shifted and its absolute errors
scaled, without a float64 pass. The inputs in doubt lie at the same positions (the test
reads v's fraction), but their proven values are the exact ones rounded, not the scaled
product: they are proven again for the block, and the replay holds only where each is the
source's scaled too.

A source keeps each output as its distance, in encodings, from the float32 product
``scaled_slope``·x, which scales with x exactly: a byte an output, so that the sources of a
sign's binade (32 MB as outputs) stay near the cache. Only blocks of normal inputs, outputs
and products, each output within a byte of its product, serve as sources.

The sources live in the worker process; a task's figures do not depend on them, only its
time: a replay gives the figures that scoring the block would, bit for bit."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..formats import FLOAT32
from ..functions import Function
from . import loops
from .inputs import encodings
from .reference import proven, spec
from .stats import Figures, ImplStats

_FRACTION_BITS = FLOAT32.precision - 1  # 23
_FIELD = 0xFF << _FRACTION_BITS
_BINADE = 1 << _FRACTION_BITS  # encodings in one binade
# Each source holds a byte per input: the sources of one binade a sign and implementation
# take 8 MB, and no more than this many bytes are kept
MEMORY = 1 << 27


@dataclass(frozen=True)
class Source:
    """A block scored in full: its first encoding, its outputs as distances from the
    products, the range of the outputs' and products' exponent fields, its figures, and its
    inputs in doubt with their proven v and unit."""

    start: int
    delta: np.ndarray  # int8: output encoding - product encoding
    fields: tuple[int, int]
    stats: ImplStats
    doubts: np.ndarray  # indices in the block
    v: np.ndarray  # at the doubts
    unit: np.ndarray


class Replayed(NamedTuple):
    """A replay's figures, and how many inputs it proved again."""

    stats: ImplStats
    proven: int


_sources: dict[tuple[str, int, int, int], Source] = {}


def clear() -> None:
    """Forget every source (tests)."""
    _sources.clear()


def _field(encoding: int) -> int:
    return (encoding & _FIELD) >> _FRACTION_BITS


def applies(function: Function, start: int, stop: int) -> bool:
    """Whether the block [start, stop) lies in the function's scale-invariant part: normal
    inputs of one sign and one binade with |x| below its ``scaled_below``."""
    edge = spec(function).scaled_below
    if not edge or stop <= start:
        return False
    top = _field(int(np.float32(edge).view(np.uint32)))
    field = _field(start)
    return (start >> 31 == (stop - 1) >> 31 and 1 <= field < top
            and _field(stop - 1) == field)


def _key(impl_key: str, start: int, n: int) -> tuple[str, int, int, int]:
    """The sign, the position in the binade and the length: what a replay must share."""
    return impl_key, start >> 31, start % _BINADE, n


def replayed(function: Function, impl_key: str, start: int, y: np.ndarray
             ) -> Replayed | None:
    """The figures of outputs y of the block from ``start`` (applies), replayed from the
    same block of an earlier binade where y is its outputs scaled; else None."""
    source = _sources.get(_key(impl_key, start, len(y)))
    if source is None or y.dtype != np.float32:
        return None
    d = _field(start) - _field(source.start)
    if source.fields[0] + d < 1 or source.fields[1] + d > 254:
        return None  # a scaled output would leave the normal range: not a scaling
    if not _near_product(y.view(np.uint32), start, spec(function).scaled_slope, source.delta):
        return None
    if len(source.doubts):
        x = (source.doubts.astype(np.uint32) + np.uint32(start)).view(np.float32)
        v, unit = proven(function, x)
        if not (np.array_equal(v, np.ldexp(source.v, d))
                and np.array_equal(unit, np.ldexp(source.unit, d))):
            return None
    return Replayed(_moved(source, start, d, y), len(source.doubts))


def remember(function: Function, impl_key: str, start: int, y: np.ndarray, stats: ImplStats,
             doubts: np.ndarray, v: np.ndarray, unit: np.ndarray) -> None:
    """Keep a block scored in full, whose inputs in doubt are at ``doubts`` and whose
    reference is v and unit, as a source, where it can be one (the module's docstring) and
    the memory is not spent."""
    if y.dtype != np.float32 or not len(y):
        return
    key = _key(impl_key, start, len(y))
    if sum(s.delta.nbytes for k, s in _sources.items() if k != key) + len(y) > MEMORY:
        return
    delta, (low, high, largest) = _deltas(y.view(np.uint32), start, spec(function).scaled_slope)
    if low < 1 or high > 254 or largest > 127:
        return
    _sources[key] = Source(start, delta, (low, high), stats, doubts.copy(), v[doubts],
                           unit[doubts])


def _deltas(bits: np.ndarray, start: int, slope: float) -> tuple[np.ndarray, tuple[int, int, int]]:
    """(bits less the products' encodings as int8, wrapped beyond a byte; the lowest and
    highest exponent field of the outputs and products, and the largest |difference|)."""
    if (compiled := loops.kernels()) is not None:  # one pass instead of eight
        delta = np.empty(len(bits), dtype=np.int8)
        low, high, least, most = compiled.product_deltas(bits, np.uint32(start),
                                                         np.float32(slope), delta)
        return delta, (int(low), int(high), max(-int(least), int(most)))
    product = _products(start, len(bits), slope)
    fields = (np.concatenate([bits, product]) & np.uint32(_FIELD)) >> _FRACTION_BITS
    wide = bits.astype(np.int64) - product.astype(np.int64)
    return wide.astype(np.int8), (int(fields.min()), int(fields.max()), int(np.abs(wide).max()))


def _products(start: int, n: int, slope: float) -> np.ndarray:
    """The encodings of the float32 products slope·x at the inputs of encodings start, ..."""
    x = encodings(start, start + n).view(np.float32)
    return (x * np.float32(slope)).view(np.uint32)


def _near_product(bits: np.ndarray, start: int, slope: float, delta: np.ndarray) -> bool:
    """Whether bits are the products' encodings plus delta (one compiled pass)."""
    if (compiled := loops.kernels()) is not None:
        return bool(compiled.near_product(bits, np.uint32(start), np.float32(slope), delta))
    product = _products(start, len(bits), slope)
    return np.array_equal(bits.astype(np.int64), product.astype(np.int64) + delta)


def _moved(source: Source, start: int, d: int, y: np.ndarray) -> ImplStats:
    """A source's figures for the block from ``start``, in the binade d above: the same
    errors and counts, the inputs' encodings moved, the absolute error scaled (exactly: a
    power of two, within float64's normal range). Its region is the block's own (below
    2^-30 that is -1 <= x < 0 or 0 <= x < 1, as the source's: one sign, one region)."""
    stats, delta = source.stats, start - source.start

    def move(f: Figures) -> Figures:  # (not dataclasses.replace: paid by every block)
        return Figures(f.n, f.max_ulp, f.worst_bits + delta, f.sum_ulp, f.n_finite,
                       f.not_correctly_rounded)

    return ImplStats(move(stats.whole), {name: move(f) for name, f in stats.regions.items()},
                     math.ldexp(stats.max_abs, d), stats.max_abs_bits + delta, stats.histogram,
                     exact=math.ldexp(stats.exact, d),
                     computed=float(y[stats.whole.worst_bits - source.start]))

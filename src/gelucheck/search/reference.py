"""The search's float64 reference at many inputs: each input's segment (expansion.py) found
by a descent that depends on the input alone, so that an input's figure is the same bits in
any task, on any worker, in any order; or, for inputs too sparse to share a segment, Arb at
the point. Values come scaled: f(x) = (hi + lo)·2^scale, |error| <= bound·2^scale."""
from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from ..functions import Function
from ..reference.arbref import _ball, _precision
from ..reference.mpref import SATURATION  # every function at its limit to far below any ulp
from .cells import FRACTION_BITS, Cell
from .expansion import PRECISION, Expansion, build, split_exact

LEVELS = FRACTION_BITS  # a segment of level L is 2^-L of a binade; level 52: one encoding
START_BELOW_PROBE = 2  # the descent starts this many levels above the binade's probe


@dataclass(frozen=True)
class Values:
    """f(x) = (hi + lo)·2^scale, within bound·2^scale, elementwise."""

    hi: np.ndarray
    lo: np.ndarray
    scale: np.ndarray  # int64
    bound: np.ndarray


class Reference:
    """The function's float64 values at any finite inputs, from cached expansions."""

    def __init__(self, function: Function):
        if function.arb is None:
            raise ValueError(f"{function.name} has no Arb formula")
        self.function = function
        self._segments: dict[tuple[int, int, int, int], Expansion | None] = {}
        self._probe: dict[tuple[int, int], int] = {}
        self.built = 0  # expansions computed (the cost the cache saves)

    def _expansion(self, sign: int, binade: int, level: int, index: int) -> Expansion | None:
        key = (sign, binade, level, index)
        if key not in self._segments:
            segment = Cell(sign, binade, level, index)  # segments lie on the cells' grid
            low, high = np.array([segment.first, segment.last], dtype=np.uint64).view(
                np.float64)
            if sign:
                low, high = -high, -low
            self._segments[key] = build(self.function, float(low), float(high))
            self.built += 1
        return self._segments[key]

    def _descend(self, sign: int, binade: int, offsets: np.ndarray, first: int,
                 level: int) -> Iterator[tuple[int, Expansion, slice]]:
        """(level, segment, slice) for inputs of one sign and binade, ``offsets`` their
        encodings' offsets in it, sorted, starting at position ``first``: each input's
        coarsest segment from ``level`` down that meets the bound - a function of the input
        alone. Level 52 (one encoding) always meets it, unless Arb fails."""
        if level > LEVELS:
            raise ArithmeticError(f"no expansion of {self.function.name} holds the encodings "
                                  f"of binade {binade}")
        shift = FRACTION_BITS - level
        if int(offsets[0]) >> shift == int(offsets[-1]) >> shift:  # sorted: one segment,
            cuts, index = [0, offsets.shape[0]], offsets[:1] >> np.uint64(shift)  # the usual
        else:
            index = offsets >> np.uint64(shift)
            cuts = [0, *(np.flatnonzero(index[1:] != index[:-1]) + 1).tolist(), index.shape[0]]
        for a, b in itertools.pairwise(cuts):
            segment = self._expansion(sign, binade, level, int(index[a]))
            if segment is not None:
                yield level, segment, slice(first + a, first + b)
            else:
                yield from self._descend(sign, binade, offsets[a:b], first + a, level + 1)

    def probe_level(self, sign: int, binade: int) -> int:
        """The level of the segment that holds the binade's middle encoding, found from
        level 0: a fixed probe, the same in every process."""
        key = (sign, binade)
        if key not in self._probe:
            middle = np.array([1 << (FRACTION_BITS - 1)], dtype=np.uint64)
            ((level, _, _),) = self._descend(sign, binade, middle, 0, 0)
            self._probe[key] = level
        return self._probe[key]

    def values(self, x: np.ndarray) -> Values:
        """Through expansions, for inputs dense enough to share segments (any order; sorted
        inputs are the fastest)."""
        x = np.asarray(x, dtype=np.float64)
        raw = x.view(np.uint64)
        order = None if np.all(raw[1:] >= raw[:-1]) else np.argsort(raw, kind="stable")
        xs = x if order is None else x[order]
        out = _empty(xs.shape[0])
        far = np.abs(xs) >= SATURATION
        self._saturated(xs, far, out)
        zero = xs == 0
        self._at_points(xs, zero, out)
        rest = np.flatnonzero(~far & ~zero)  # sorted: runs of one sign and binade
        bits = xs.view(np.uint64)[rest]
        group = bits >> np.uint64(FRACTION_BITS)  # sign and exponent
        cuts = [0, *(np.flatnonzero(group[1:] != group[:-1]) + 1).tolist(), rest.shape[0]]
        for a, b in itertools.pairwise(cuts):
            if a == b:
                continue
            for segment, where in self._group_segments(bits[a:b], int(rest[a])):
                _evaluate(segment, xs, where, out)
        if order is not None:
            unsorted = _empty(xs.shape[0])
            for target, source in zip(unsorted, out, strict=True):
                target[order] = source
            out = unsorted
        return self._sided(x, out)

    def segments(self, x: np.ndarray) -> list[tuple[Expansion, slice]] | None:
        """Each input's segment, as values() finds it, for inputs sorted by encoding, of one
        sign and binade, none zero or saturated (a dense block's usual shape); None for
        any others."""
        bits = x.view(np.uint64)
        if (x.shape[0] == 0 or bits[0] >> np.uint64(FRACTION_BITS)
                != bits[-1] >> np.uint64(FRACTION_BITS) or x[0] == 0 or x[-1] == 0
                or max(abs(x[0]), abs(x[-1])) >= SATURATION or np.any(bits[1:] < bits[:-1])):
            return None
        return list(self._group_segments(bits, 0))

    def _group_segments(self, bits: np.ndarray, first: int) -> Iterator[tuple[Expansion, slice]]:
        """The segments of sorted encodings of one sign and binade, the first at position
        ``first``: a descent from the binade's probe level."""
        group = int(bits[0]) >> FRACTION_BITS  # sign and exponent
        sign, binade = group >> 11, group & 0x7FF
        offsets = bits & np.uint64((1 << FRACTION_BITS) - 1)
        start = max(0, self.probe_level(sign, binade) - START_BELOW_PROBE)
        for _, segment, where in self._descend(sign, binade, offsets, first, start):
            yield segment, where

    def at_points(self, x: np.ndarray) -> Values:
        """Arb at each input: for inputs too sparse to share a segment."""
        x = np.asarray(x, dtype=np.float64)
        out = _empty(x.shape[0])
        far = np.abs(x) >= SATURATION
        self._saturated(x, far, out)
        self._at_points(x, ~far, out)
        return self._sided(x, out)

    def _sided(self, x: np.ndarray, out: Columns) -> Values:
        """A value within its bound of a power of two (erf far right is 1 less far below
        2^-192, GELU far right x less a little) gets its side from the function's row, as
        the reference of record does where the difference is too small to see: it decides
        whether ulp(v) is the binade's below."""
        hi, lo, bound = out[0], out[1], out[3]
        lost = np.abs(lo) <= bound  # rare: the other tests only where it holds
        maybe = np.flatnonzero(lost)
        lost[maybe] = (x[maybe] != 0) & (np.abs(np.frexp(hi[maybe])[0]) == 0.5)
        near = lost & (np.abs(x) < 1)  # where the row's side depends on x itself
        for i in np.flatnonzero(near):
            lo[i] = math.copysign(0.0, self.function.residual_side(float(x[i])))
        left, right = (math.copysign(0.0, self.function.residual_side(s)) for s in (-1.0, 1.0))
        far = lost & ~near
        lo[far] = np.where(x[far] < 0, left, right)
        return Values(*out)

    def _saturated(self, x: np.ndarray, where: np.ndarray, out: Columns) -> None:
        """The limit, exact to far below any ulp (mpref.SATURATION): the row's value at
        ±SATURATION, or x itself where the row says so (x·Φ far right)."""
        if not where.any():
            return
        left, right = (self.function.saturated(s * SATURATION) for s in (-1, 1))
        x = x[where]
        out[0][where] = np.where(x < 0, left, np.where(right == SATURATION, x, right))

    def _at_points(self, x: np.ndarray, where: np.ndarray, out: Columns) -> None:
        with _precision(PRECISION):
            for i in np.flatnonzero(where):
                ball = _ball(self.function, float(x[i]))
                man, exp = (int(n) for n in ball.mid().man_exp())
                if man == 0:  # exact: GELU(±0), erf(±0)
                    out[0][i] = 0.0
                    continue
                scale = exp + man.bit_length() - 1
                out[0][i], out[1][i] = split_exact(man, exp - scale)
                out[2][i] = scale
                radius, radius_exp = (int(n) for n in ball.rad().man_exp())
                # the radius (rounded up) and the midpoint's split to 2^-104 of |v|, scaled
                out[3][i] = math.ldexp(radius + 1, radius_exp - scale) + 2.0**-103


Columns = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # hi, lo, scale, bound


def _empty(n: int) -> Columns:
    return (np.zeros(n), np.zeros(n), np.zeros(n, dtype=np.int64), np.zeros(n))


def _factors(step: int) -> tuple[float, float]:
    """2^-step as two powers of two that each fit a double (a subnormal segment's is 2^1073)."""
    half = -step // 2
    return 2.0**half, 2.0 ** (-step - half)


def _evaluate(e: Expansion, x: np.ndarray, where: slice, out: Columns) -> None:
    """The expansion at x[where], in double-double (the steps design.md bounds): compiled
    where numba is installed, else in NumPy - the same operations in the same order."""
    compiled = compiled_kernels()
    if compiled is not None:
        compiled.evaluate(x, where.start, where.stop, *kernel_arguments(e), out[0], out[1])
    else:
        f1, f2 = _factors(e.step)
        # exact: x and the centre share a binade (Sterbenz) or lie below the normal range,
        # and the powers of two only move the exponent (|t| <= 1)
        t = ((x[where] - e.centre) * f1) * f2
        p = np.full(t.shape, e.tail[-1])
        for c in e.tail[-2::-1]:
            p = p * t + c
        tail = (t * t) * p
        product, product_error = _exact_product(e.c1_halves, t)
        head = e.c0[0] + product
        head_error = _two_sum_error(e.c0[0], product, head)
        low = ((e.c0[1] + e.c1[1] * t) + (product_error + head_error)) + tail
        hi = head + low
        out[0][where] = hi
        out[1][where] = low - (hi - head)
    out[2][where] = e.scale
    out[3][where] = e.bound


def kernel_arguments(e: Expansion) -> tuple[Any, ...]:
    """The expansion as the compiled loops take it (kernels.py)."""
    return (e.centre, *_factors(e.step), e.tail, e.c0[0], e.c0[1], e.c1[1], *e.c1_halves)


@cache
def compiled_kernels() -> Any:
    """search/kernels.py where numba is installed, else None (NumPy serves)."""
    try:
        from . import kernels
    except ImportError:
        return None
    return kernels


def _two_sum_error(a: float, b: np.ndarray, s: np.ndarray) -> np.ndarray:
    """a + b - s exactly (Knuth's TwoSum)."""
    bb = s - a
    return (a - (s - bb)) + (b - bb)


def _exact_product(halves: tuple[float, float], t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(a1 + a2)·t as p + error exactly (Dekker's product; t split by Veltkamp's, the
    coefficient's halves split beforehand)."""
    a1, a2 = halves
    split = t * 134217729.0  # 2^27 + 1
    t1 = split - (split - t)
    t2 = t - t1
    p = (a1 + a2) * t
    return p, ((a1 * t1 - p) + a1 * t2 + a2 * t1) + a2 * t2

"""Scoring one block of a sweep: an implementation's outputs against the reference's exact
values, as typed statistics (stats.ImplStats) - measured on every input in float64
(dense_figures), in bit space against the correctly rounded results first (Rounded), or in
closed form where those results are known (known_figures)."""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from . import loops
from .known import Indexed, Known
from .stats import BINS, Figures, ImplStats, histogram, total

Regions = Sequence[tuple[str, slice]]  # chunk.region_slices: each region's part of a block


class Score(NamedTuple):
    """One comparison of outputs with the reference (kernels.score, or NumPy's passes)."""

    sum_ulp: float  # of the finite errors
    infinite: int
    above_half: int  # not correctly rounded
    at_least_one: int
    at_least_two: int
    at_least_four: int
    max_ulp: float
    worst: int  # index of the first largest error
    max_abs: float  # the largest |y - v|, NaN where an output is NaN
    largest: int  # index: the first NaN output, else the first largest |y - v|

    def figures(self, first: int, n: int) -> Figures:
        """The figures of the n inputs scored, the first of encoding ``first``."""
        return Figures(n, float(self.max_ulp), first + self.worst, float(self.sum_ulp),
                       n - int(self.infinite), int(self.above_half))


def _largest(parts: list[tuple[float, int]]) -> tuple[float, int]:
    """The largest of (|y - v|, index) pairs of disjoint parts as np.argmax picks it over
    the whole: the first NaN, else the first largest."""
    nans = [i for size, i in parts if math.isnan(size)]
    if nans:
        return math.nan, min(nans)
    return max(parts, key=lambda p: (p[0], -p[1]))


DENSE = 16  # more outputs than 1 in DENSE not correctly rounded: measure all of them
# the first outputs, whose share not correctly rounded decides that before the block is
# rounded: torch's GELUs are dense in all the middle, where the rounding pass and the bit
# comparison were for nothing. A choice of path, not of figures: both give the same
SAMPLE = 2048


def errors(y: np.ndarray, v: np.ndarray, unit: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(|y - v|, that in ulps): NaN in the first where y is NaN, inf in the second (a NaN
    result where the exact value is a number)."""
    d = y.astype(np.float64)  # then in place: a mixed float32-float64 ufunc casts through
    np.subtract(d, v, out=d)  # buffers
    np.abs(d, out=d)
    with np.errstate(invalid="ignore"):
        err = np.divide(d, unit)
    err[np.isnan(err)] = np.inf
    return d, err


def score(y: np.ndarray, v: np.ndarray, unit: np.ndarray) -> Score:
    """The comparison of outputs y with the reference: one compiled pass that writes nothing,
    or NumPy's passes over the errors."""
    if (compiled := loops.kernels()) is not None:
        return Score._make(compiled.score(y, v, unit))
    d, err = errors(y, v, unit)
    total_ulp = float(err.sum())
    infinite = 0
    if not np.isfinite(total_ulp):
        finite = np.isfinite(err)
        infinite, total_ulp = int(err.size - np.count_nonzero(finite)), float(err[finite].sum())
    worst, largest = int(np.argmax(err)), int(np.argmax(d))  # argmax: the first NaN
    one, two, four = (int(np.count_nonzero(err >= k)) for k in (1.0, 2.0, 4.0))
    return Score(total_ulp, infinite, int(np.count_nonzero(err > 0.5)), one, two, four,
                 float(err[worst]), worst, float(d[largest]), largest)


def _histogram(y: np.ndarray, v: np.ndarray, unit: np.ndarray, scored: Score) -> np.ndarray:
    """The histogram of the errors: bins 0 to 3 ([0, 1/2], (1/2, 1), [1, 2), [2, 4)) from
    the score's counts; only errors of 4 ulps and more are binned one by one, measured
    again (a good implementation has none)."""
    counts = np.zeros(BINS, dtype=np.int64)
    if scored.at_least_four:
        if (compiled := loops.kernels()) is not None:
            compiled.histogram_above_four(y, v, unit, counts)
        else:
            err = errors(y, v, unit)[1]
            counts += histogram(np.compress(err >= 4.0, err))
    counts[:4] = (len(y) - scored.above_half, scored.above_half - scored.at_least_one,
                  scored.at_least_one - scored.at_least_two,
                  scored.at_least_two - scored.at_least_four)
    return counts


def dense_figures(y: np.ndarray, v: np.ndarray, unit: np.ndarray, first: int,
                  regions: Regions) -> ImplStats:
    """The statistics of y measured on every input in float64 (``first``: the first
    input's encoding)."""
    by_region, counts, largest = {}, np.zeros(BINS, dtype=np.int64), []
    # the regions partition the chunk: the overall figures are merged from theirs
    for name, s in regions:
        scored = score(y[s], v[s], unit[s])
        by_region[name] = scored.figures(first + s.start, s.stop - s.start)
        counts += _histogram(y[s], v[s], unit[s], scored)
        largest.append((scored.max_abs, s.start + scored.largest))
    max_abs, j = _largest(largest)
    return ImplStats(total(by_region.values()), by_region, max_abs, first + j,
                     tuple(counts.tolist()))


def every_error_infinite(y: np.ndarray) -> bool:
    """Whether every output is NaN or infinite, so that every error is infinite whatever the
    exact values, which are numbers for every sweepable function: an implementation's
    overflow (torch's GELU from 2^127 on, the tanh form's derivative beyond |x| = 2^42 in
    torch and JAX). Read off the first output before the whole block."""
    if not len(y) or math.isfinite(y[0]):
        return False
    if (compiled := loops.kernels()) is not None and y.dtype == np.float32:
        return bool(compiled.all_non_finite(y.view(np.uint32)))
    return not bool(np.isfinite(y).any())


def infinite_figures(y: np.ndarray, first: int, regions: Regions) -> ImplStats:
    """What dense_figures gives for outputs y that are all NaN or infinite
    (every_error_infinite), without the reference: every error infinite - none finite, none
    correctly rounded, the largest at each region's first input -, the largest |y - v| NaN
    at the first NaN output, where one is, else infinite at the block's first, all of them
    in the histogram's last bin. (The exact value at the worst input is the caller's.)"""
    n = len(y)
    by_region = {name: Figures(s.stop - s.start, math.inf, first + s.start, 0.0, 0,
                               s.stop - s.start) for name, s in regions}
    counts = [0] * BINS
    counts[-1] = n
    nan = np.isnan(y)
    at = int(np.argmax(nan))  # np.argmax's choice: the first NaN, else the first output
    return ImplStats(total(by_region.values()), by_region, math.nan if nan[at] else math.inf,
                     first + at, tuple(counts))


class Rounded:
    """The correctly rounded float32 results of a block and what they score, so that an
    implementation is compared in bit space first: where its output is the correctly rounded
    float32, its errors are these; only the other outputs are measured in float64. For a good
    implementation that is a few inputs in a thousand, and the comparison costs two passes
    over the block instead of ten (docs/design.md, The sweep).

    The reference's float64 value never lies on a float32 rounding boundary (fastref sends
    those inputs to mpmath), so rounding it once is the correctly rounded result; and any
    other float32 lies at least as far from the exact value, so an output that differs can
    only raise a maximum."""

    def __init__(self, v: np.ndarray, unit: np.ndarray, first: int, regions: Regions):
        self.v, self.unit, self.start, self.regions = v, unit, first, regions
        self.sample = v[:SAMPLE].astype(np.float32).view(np.uint32)
        self.rounded: np.ndarray | None = None  # once an output is close enough to need it
        self.by_region: dict[str, Figures] | None = None  # what the rounded results score
        self.max_abs, self.j = math.nan, 0
        self.worst_at: dict[str, int] = {}

    def _score_rounded(self, rounded: np.ndarray) -> dict[str, Figures]:
        """The figures of the correctly rounded results - a comparison pass of its own, made
        only for a block where some implementation returns mostly those (torch's GELU, in
        its far left, returns others and is measured in float64 at once)."""
        by_region, largest = {}, []
        for name, s in self.regions:
            scored = score(rounded[s], self.v[s], self.unit[s])
            by_region[name] = scored.figures(self.start + s.start, s.stop - s.start)
            largest.append((scored.max_abs, s.start + scored.largest))
        self.max_abs, self.j = _largest(largest)
        # the index of each region's (first) largest error, read off its encoding
        self.worst_at = {name: r.worst_bits - self.start for name, r in by_region.items()}
        return by_region

    def score(self, y: np.ndarray) -> ImplStats:
        if np.count_nonzero(y[:SAMPLE].view(np.uint32) != self.sample) > len(self.sample) // DENSE:
            return dense_figures(y, self.v, self.unit, self.start, self.regions)
        if self.rounded is None:
            self.rounded = self.v.astype(np.float32)
        rounded = self.rounded
        differs = y.view(np.uint32) != rounded.view(np.uint32)
        if np.count_nonzero(differs) > len(y) // DENSE:  # many: whole-array arithmetic wins
            return dense_figures(y, self.v, self.unit, self.start, self.regions)
        if self.by_region is None:
            self.by_region = self._score_rounded(rounded)
        other = np.flatnonzero(differs)  # ascending
        diff, e = errors(y[other], self.v[other], self.unit[other])
        by_region = {}
        for name, s in self.regions:
            lo, hi = np.searchsorted(other, [s.start, s.stop])
            by_region[name] = self._region(rounded, self.by_region[name], name,
                                           other[lo:hi], e[lo:hi])
        wrong = e[e > 0.5]
        counts = histogram(wrong)
        counts[0] = len(y) - len(wrong)
        largest = [(self.max_abs, self.j)]
        if diff.size:
            k = int(np.argmax(diff))  # the first NaN, else the first largest
            largest.append((float(diff[k]), int(other[k])))
        max_abs, j = _largest(largest)
        return ImplStats(total(by_region.values()), by_region, max_abs, self.start + j,
                         tuple(counts.tolist()))

    def _region(self, rounded: np.ndarray, base: Figures, name: str, at: np.ndarray,
                e: np.ndarray) -> Figures:
        """The region's figures ``base`` (the rounded results') with the outputs at ``at``
        scoring ``e`` instead."""
        finite = np.isfinite(e)
        replaced = errors(rounded[at], self.v[at], self.unit[at])[1]
        max_ulp, worst_bits = base.max_ulp, base.worst_bits
        if e.size:
            k = int(np.argmax(e))
            if e[k] > max_ulp or (e[k] == max_ulp and at[k] < self.worst_at[name]):
                max_ulp, worst_bits = float(e[k]), self.start + int(at[k])
        return Figures(base.n, max_ulp, worst_bits,
                       base.sum_ulp - float(replaced.sum()) + float(e[finite].sum()),
                       base.n_finite - int(np.count_nonzero(~finite)),
                       base.not_correctly_rounded - int(np.count_nonzero(replaced > 0.5))
                       + int(np.count_nonzero(e > 0.5)))


def known_figures(known: Known, x: Indexed, first: int, region: str) -> ImplStats:
    """What dense_figures gives, in closed form, for outputs that are ``known``'s results on a
    run of inputs x (an array or an inputs.Run) from the encoding ``first`` on, in one region:
    no error is above 1/2. |r| is monotone in |x|, so the largest error lies at an end of the
    run or at the doubled input (the lower on a tie, as argmax)."""
    n = len(x)
    ends = sorted({0, n - 1})
    candidates = sorted(set(ends) if known.doubled is None else {*ends, known.doubled})
    worst = max(candidates, key=lambda i: known.error(x, i))
    largest = max(ends, key=lambda i: abs(known.residual(x, i)))
    figures = Figures(n, known.error(x, worst), first + worst, known.error_sum(x), n, 0)
    counts = [0] * BINS
    counts[0] = n
    return ImplStats(figures, {region: figures}, abs(known.residual(x, largest)),
                     first + largest, tuple(counts),
                     exact=known.result(first + worst) + known.residual(x, worst))

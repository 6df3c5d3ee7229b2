"""One task of the float64 search: an implementation on one cell's inputs (a sample or all
of them), scored against the fast reference. Pure: the same cell, sample size and seed give
the same bytes on any worker."""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..backends import Implementation
from .cells import Cell, sample
from .reference import START_BELOW_PROBE, Reference
from .score import fused_ulps, ulps

KEPT = 4  # candidates a task returns: its largest errors
# Expansions pay where a segment serves this many inputs at least (one costs as much as
# about 40 inputs in Arb); sparser samples go to Arb point by point.
INPUTS_PER_SEGMENT = 64
# The reference and the scoring run over blocks of this many inputs: their temporaries then
# stay in a core's cache (a whole round at once streams each of them through memory, several
# times slower). Each input's figure is its own, so the blocks change no bits.
BLOCK = 1 << 14
# A cell searched whole goes through the implementation and the fused scoring in blocks of
# this many inputs: larger blocks stream through memory, smaller ones pay more calls.
WHOLE_BLOCK = 1 << 15
GROUP = 1 << 10  # largest(): errors per group whose maximum cuts the candidates


@dataclass(frozen=True)
class Candidate:
    x: float
    y: float
    error: float  # in ulps, by the fast reference
    doubt: float  # how far the reference may move that figure


@dataclass(frozen=True)
class CellResult:
    cell: Cell
    evaluated: int
    worst: tuple[Candidate, ...]  # largest error first
    implementation_s: float
    reference_s: float

    @property
    def score(self) -> float:
        """How promising the cell is: the mean of its largest errors, steadier than their
        maximum, which the rounding noise of a single input sets."""
        return sum(c.error for c in self.worst) / len(self.worst) if self.worst else 0.0


def _dense(reference: Reference, cell: Cell, samples: int | None) -> bool:
    """Whether the cell's inputs share segments enough for expansions (a rule of the cell
    alone, so the figures do not depend on what a worker computed before)."""
    if samples is None:
        return True
    if cell.level == 0:
        return False
    segment_level = reference.probe_level(cell.sign, cell.binade) - START_BELOW_PROBE
    return samples >= INPUTS_PER_SEGMENT << max(0, segment_level - cell.level)


def largest(error: np.ndarray) -> np.ndarray:
    """The positions of the KEPT largest errors, largest first (ties: the first)."""
    candidates = np.arange(error.shape[0])
    if error.shape[0] > KEPT * GROUP:
        # a cut that costs a pass: the KEPT-th largest of the groups' maxima, at most the
        # KEPT-th largest error, so every one of the KEPT lies at or above it
        whole = error.shape[0] // GROUP * GROUP
        maxima = error[:whole].reshape(-1, GROUP).max(axis=1)
        candidates = np.flatnonzero(error >= np.partition(maxima, -KEPT)[-KEPT])
    return candidates[np.lexsort((candidates, -error[candidates]))][:KEPT]


def evaluate(impl: Implementation, reference: Reference, cells: list[Cell],
             samples: int | None, seed: int) -> list[CellResult]:
    """Cells of one sample size: sampled ones in one call of the implementation and of each
    reference (a call per cell would cost more than its inputs' evaluation); whole ones each
    in blocks, from the implementation's call to the scores."""
    if samples is None:
        return [_whole(impl, reference, cell) for cell in cells]
    x, ends = sample(cells, samples, seed)
    clock = time.perf_counter()
    y = np.asarray(impl(x), dtype=np.float64)
    implementation_s = time.perf_counter() - clock
    dense = np.repeat([_dense(reference, c, samples) for c in cells], np.diff(ends))
    error, doubt = np.empty(x.shape[0]), np.empty(x.shape[0])
    for block in (slice(a, a + BLOCK) for a in range(0, x.shape[0], BLOCK)):
        for mask, compute in ((dense[block], reference.values),
                              (~dense[block], reference.at_points)):
            if mask.all():  # no copies through a mask
                error[block], doubt[block] = ulps(y[block], compute(x[block]))
            elif mask.any():
                error[block][mask], doubt[block][mask] = ulps(y[block][mask],
                                                              compute(x[block][mask]))
    reference_s = time.perf_counter() - clock - implementation_s
    share = 1 / len(cells)
    results = []
    for cell, a, b in zip(cells, ends[:-1], ends[1:], strict=True):
        at = a + largest(error[a:b])
        worst = _candidates(x[at], y[at], error[at], doubt[at])
        results.append(CellResult(cell, int(b - a), worst, implementation_s * share,
                                  reference_s * share))
    return results


def _whole(impl: Implementation, reference: Reference, cell: Cell) -> CellResult:
    """Every input of the cell, in blocks of WHOLE_BLOCK: each block's inputs, outputs and
    errors stay in the core's cache, and each block's KEPT largest errors are merged (the
    same KEPT, ties to the first input, as over the whole cell at once). An implementation
    on another device (a GPU) is called once for the whole cell: each call pays its copies
    and launches, and the workers share the device."""
    x = cell.inputs(None, 0)
    implementation_s = reference_s = 0.0
    outputs = None
    if impl.device != "cpu":
        clock = time.perf_counter()
        outputs = np.asarray(impl(x), dtype=np.float64)
        implementation_s += time.perf_counter() - clock
    kept: list[tuple[float, int, float]] = []  # (error, position, output)
    for a in range(0, x.shape[0], WHOLE_BLOCK):
        block = x[a:a + WHOLE_BLOCK]
        clock = time.perf_counter()
        y = (np.asarray(impl(block), dtype=np.float64) if outputs is None
             else outputs[a:a + WHOLE_BLOCK])
        implementation_s += time.perf_counter() - clock
        clock = time.perf_counter()
        error = np.empty(block.shape[0])
        if not fused_ulps(reference, block, y, error):
            for b in range(0, block.shape[0], BLOCK):
                part = slice(b, b + BLOCK)
                error[part] = ulps(y[part], reference.values(block[part]))[0]
        kept += [(float(error[i]), a + int(i), float(y[i])) for i in largest(error)]
        reference_s += time.perf_counter() - clock
    clock = time.perf_counter()
    kept = sorted(kept, key=lambda k: (-k[0], k[1]))[:KEPT]
    at = np.array([k[1] for k in kept], dtype=np.int64)
    y = np.array([k[2] for k in kept])
    # the doubts, which the fused scoring leaves out (and the errors again: the same bits,
    # each input's segment its own)
    error, doubt = ulps(y, reference.values(x[at]))
    reference_s += time.perf_counter() - clock
    return CellResult(cell, x.shape[0], _candidates(x[at], y, error, doubt), implementation_s,
                      reference_s)


def _candidates(x: np.ndarray, y: np.ndarray, error: np.ndarray, doubt: np.ndarray
                ) -> tuple[Candidate, ...]:
    return tuple(Candidate(*(float(v) for v in c)) for c in zip(x, y, error, doubt,
                                                                 strict=True))

"""The negative half of an odd function's sweep read off the positive half (docs/design.md,
The sweep of erf and erfc). Where the reference is exactly odd (SweepSpec.mirrored: v, unit
and doubt at -x are -v, unit and doubt at x, bit for bit) and an implementation's outputs on a
block of negative inputs are its outputs on the block of the same magnitudes negated, bit for
bit, its errors there are the positive block's, in the same order - encodings of either sign
ascend with |x| - and so are its figures, moved to the other sign: that block needs no
reference and no comparison, only the pass that tests the outputs opposite (kernels.opposite).

A job of two tasks, one sign each (runner.jobs), runs their blocks interleaved
(chunk.evaluate_job), each positive block's mirror just after it: the last positive block's
outputs and figures are kept (Mirror) for the next negative block alone, so that each
implementation has been called once more in between - its outputs are not copied, and an
implementation that returns the same memory again (or its inputs' memory, which the next
block's inputs overwrite) is measured, never mirrored."""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from . import loops
from .stats import Figures, ImplStats

SIGN = 0x80000000  # the sign bit of a float32's encoding
_PREFIX = 256  # outputs tested first: an implementation that is not odd differs within them


def mirror_of(task: tuple[int, int]) -> tuple[int, int]:
    """The encodings of the same magnitudes, of the other sign."""
    return task[0] ^ SIGN, task[1] ^ SIGN


@dataclass
class _Kept:
    """A positive block: its encodings, the inputs it proved, and each implementation's
    outputs and figures."""

    block: tuple[int, int]
    n_slow: int
    outputs: dict[str, tuple[np.ndarray, ImplStats]] = field(default_factory=dict)


class Mirror:
    """A job's last positive block, kept for its negative mirror (chunk.evaluate_job)."""

    def __init__(self) -> None:
        self._kept: _Kept | None = None
        self._open: dict[str, tuple[np.ndarray, ImplStats]] = {}  # the block being scored

    def keep(self, key: str, y: np.ndarray, stats: ImplStats, inputs: np.ndarray | None) -> None:
        """An implementation's outputs and figures on the positive block being scored, where
        they lie in one region (a negative block in one region takes them) and the outputs
        are not the memory of ``inputs``, the array the next blocks' inputs are written to."""
        if (y.dtype == np.float32 and y.ndim == 1 and len(stats.regions) == 1
                and (inputs is None or not np.may_share_memory(y, inputs))):
            self._open[key] = (y, stats)

    def close(self, start: int, stop: int, n_slow: int) -> None:
        """The positive block [start, stop) scored, ``n_slow`` of its inputs proven: kept,
        in place of the one before."""
        self._kept = _Kept((start, stop), n_slow, self._open) if self._open else None
        self._open = {}

    def forget(self) -> None:
        """Nothing kept: the implementations were called on other inputs since (a run of
        closed-form spans)."""
        self._kept = None

    def source(self, start: int, stop: int) -> Source | None:
        """What the last positive block kept, for the negative block [start, stop) if that
        is its mirror (else None: it kept nothing, or another block came between)."""
        kept, self._kept = self._kept, None
        if kept is None or kept.block != mirror_of((start, stop)):
            return None
        return Source(kept)


class Source:
    """A positive block's figures for the implementations whose outputs on its negative
    mirror are opposite."""

    def __init__(self, kept: _Kept):
        self.n_slow = kept.n_slow
        self._outputs = kept.outputs

    def figures(self, key: str, y: np.ndarray, region: str) -> ImplStats | None:
        """The figures of outputs y of implementation ``key`` on the negative block, in its
        one region ``region``; None where they are not the positive outputs negated (or are
        their very memory, rewritten)."""
        if (kept := self._outputs.get(key)) is None or y.dtype != np.float32 or y.ndim != 1:
            return None
        positive, stats = kept
        if len(y) != len(positive) or np.may_share_memory(y, positive):
            return None
        bits, other = y.view(np.uint32), positive.view(np.uint32)
        if not (_opposite(bits[:_PREFIX], other[:_PREFIX]) and _opposite(bits, other)):
            return None
        return mirrored(stats, region)


def _opposite(bits: np.ndarray, other: np.ndarray) -> bool:
    if (compiled := loops.kernels()) is not None:
        return compiled.opposite(bits, other)
    return bool(np.array_equal(bits, other ^ np.uint32(SIGN)))


def mirrored(stats: ImplStats, region: str) -> ImplStats:
    """A positive block's figures (one region) as its negative mirror's, in ``region``: the
    same errors at the encodings of the other sign, the exact value negated. The output
    there and the times are the caller's."""
    (figures,) = stats.regions.values()
    return replace(stats, whole=_moved(stats.whole), regions={region: _moved(figures)},
                   max_abs_bits=stats.max_abs_bits ^ SIGN, exact=-stats.exact, eval_s=0.0,
                   check_s=0.0, guard_s=0.0)


def _moved(figures: Figures) -> Figures:
    return replace(figures, worst_bits=figures.worst_bits ^ SIGN)

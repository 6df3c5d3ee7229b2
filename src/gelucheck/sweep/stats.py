"""A sweep's statistics as typed values, merged in one place: per region (Figures), per
implementation (ImplStats, or ImplFailure), per chunk of encodings (ChunkStats). Tasks return
them, checkpoints and pytest-xdist carry them as plain data (to_data / from_data), and
``results`` turns the merged chunk into the result schema of ``gelucheck check``."""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np

from ..backends import Implementation, identity
from ..checks.regions import REGIONS, region
from ..formats import FLOAT32
from ..results import ErrorFigures, Failure, SweepResult

# Histogram of ulp errors: bin 0 is [0, 1/2] (correctly rounded), bin 1 (1/2, 1), bin k >= 2
# [2^(k-2), 2^(k-1)), the second last everything from 2^(BINS-3) up, the last inf and NaN.
BINS = 36


def key_of(impl: Implementation) -> str:
    """The one name of an implementation in a sweep's statistics and checkpoints."""
    return f"{impl.id}/{impl.function.name}"


def split_key(key: str) -> tuple[str, str]:
    """key_of's (implementation id, function name)."""
    spec, _, function = key.rpartition("/")
    return spec, function


def histogram_edges() -> list[float]:
    return [0.0, 0.5] + [2.0 ** (k - 2) for k in range(2, BINS - 1)] + [float("inf")]


def histogram(err: np.ndarray) -> np.ndarray:
    """Counts per bin of errors above 1/2 (bin 0 is left for the caller to fill).

    The bin is read off the float64 exponent field: err in [2^k, 2^(k+1)) has the field
    1023 + k and goes to bin k + 2; inf (field 2047) to the last bin. The fields are sorted
    as int16 and the bins' first positions found by bisection: np.bincount's one counter per
    input stalls on repeated bins (a bad implementation has many)."""
    fields = (err.view(np.int64) >> 52).astype(np.int16)
    fields.sort()
    starts = np.searchsorted(fields, _FIRST_FIELDS, "left")  # bins 1 .. BINS-2, then inf
    counts = np.zeros(BINS, dtype=np.int64)
    counts[1:] = np.diff(starts, append=len(fields))
    return counts


# the smallest exponent field of bins 1 .. BINS-2 ((1/2, 1) is field 1022), then inf's
_FIRST_FIELDS = np.array([1022 + k for k in range(BINS - 2)] + [2047], dtype=np.int16)


@dataclass(frozen=True)
class Figures:
    """The figures of a set of inputs (a region of a chunk, or all of it): mergeable sums and
    the largest error with its input's encoding."""

    n: int
    max_ulp: float
    worst_bits: int
    sum_ulp: float  # of the finite errors
    n_finite: int
    not_correctly_rounded: int

    def _outranks(self, other: Figures) -> bool:
        """The larger error; the lower encoding on a tie, so that the result never depends
        on the order of merging."""
        return (self.max_ulp, -self.worst_bits) > (other.max_ulp, -other.worst_bits)

    @property
    def mean_ulp(self) -> float:
        return self.sum_ulp / self.n_finite if self.n_finite else math.inf


def _in_order(values: Iterable[float]) -> float:
    """The sum of floats added one by one in their order, as pairwise merges add them (the
    builtin sum compensates its float sums from Python 3.12 on: other last bits)."""
    out = 0.0
    for value in values:
        out += value
    return out


def _top(parts: Sequence[Figures]) -> int:
    """The index of the part with the largest error (the lowest encoding on a tie)."""
    top = 0
    for k in range(1, len(parts)):
        if parts[k]._outranks(parts[top]):
            top = k
    return top


def total(parts: Iterable[Figures]) -> Figures:
    """The figures of disjoint parts (a chunk's regions, a task's blocks) as one: the sums
    in the parts' order, whatever their number - merging them two at a time, in order,
    gives the same bits."""
    parts = tuple(parts)
    if not parts:
        raise ValueError("no figures to add up")
    top = parts[_top(parts)]
    return Figures(sum(p.n for p in parts), top.max_ulp, top.worst_bits,
                   _in_order(p.sum_ulp for p in parts), sum(p.n_finite for p in parts),
                   sum(p.not_correctly_rounded for p in parts))


@dataclass(frozen=True)
class ImplStats:
    """One implementation over a chunk: its figures, per region too, the largest absolute
    error, the histogram, and its values at the worst input; the CPU seconds of its own
    evaluation, of the comparison with the reference, and of the input guard."""

    whole: Figures
    regions: Mapping[str, Figures]
    max_abs: float  # the largest |y - v|, NaN where an output is NaN
    max_abs_bits: int
    histogram: tuple[int, ...]
    exact: float = math.nan  # at the worst input
    computed: float = math.nan
    eval_s: float = 0.0
    check_s: float = 0.0
    guard_s: float = 0.0

    @staticmethod
    def combine(parts: Sequence[ImplStats]) -> ImplStats:
        """The statistics of disjoint chunks as one, in their order (a task's blocks: one
        pass, not a merge and its new objects per block)."""
        wholes = [p.whole for p in parts]
        top = parts[_top(wholes)]
        largest = parts[0]
        for p in parts[1:]:
            if (p.max_abs, -p.max_abs_bits) > (largest.max_abs, -largest.max_abs_bits):
                largest = p
        by_region: dict[str, list[Figures]] = {}
        for p in parts:
            for name, r in p.regions.items():
                by_region.setdefault(name, []).append(r)
        regions = {name: rs[0] if len(rs) == 1 else total(rs) for name, rs in by_region.items()}
        return ImplStats(total(wholes), regions, largest.max_abs, largest.max_abs_bits,
                         tuple(map(sum, zip(*(p.histogram for p in parts)))),
                         top.exact, top.computed, _in_order(p.eval_s for p in parts),
                         _in_order(p.check_s for p in parts), _in_order(p.guard_s for p in parts))


@dataclass(frozen=True)
class ImplFailure:
    """An implementation that raised on a chunk: the sweep reports it, never a figure."""

    error: str


Outcome = ImplStats | ImplFailure


def combine_outcomes(outcomes: Sequence[Outcome]) -> Outcome:
    """The first failure among the chunks' is the implementation's outcome; else the merged
    figures."""
    stats: list[ImplStats] = []
    for outcome in outcomes:
        if isinstance(outcome, ImplFailure):
            return outcome
        stats.append(outcome)
    return stats[0] if len(stats) == 1 else ImplStats.combine(stats)


@dataclass(frozen=True)
class ChunkStats:
    """Every implementation over the encodings [start, stop), and the reference's share."""

    function: str
    start: int
    stop: int
    # inputs too close to decide in float64: settled by the stored proofs, Arb or mpmath
    n_slow_reference: int
    reference_s: float
    implementations: Mapping[str, Outcome] = field(default_factory=dict)
    task_s: float = 0.0  # the task's whole time: blocks, merging, bookkeeping

    @staticmethod
    def combine(parts: Sequence[ChunkStats]) -> ChunkStats:
        """Disjoint chunks as one, in their order: merging them two at a time, in order,
        gives the same bits."""
        if not parts:
            raise ValueError("no chunks to merge")
        by_key: dict[str, list[Outcome]] = {}
        for part in parts:
            for key, outcome in part.implementations.items():
                by_key.setdefault(key, []).append(outcome)
        return ChunkStats(parts[0].function, min(p.start for p in parts),
                          max(p.stop for p in parts), sum(p.n_slow_reference for p in parts),
                          _in_order(p.reference_s for p in parts),
                          {key: combine_outcomes(o) for key, o in by_key.items()},
                          _in_order(p.task_s for p in parts))

    def to_data(self) -> dict[str, Any]:
        """Plain data (dicts, lists, numbers) for a checkpoint file or an xdist report."""
        out = asdict(self)
        for key, outcome in self.implementations.items():
            out["implementations"][key]["kind"] = ("failure" if isinstance(outcome, ImplFailure)
                                                   else "stats")
        return out

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> ChunkStats:
        """to_data's value back; KeyError or TypeError where the data is not one."""
        impls: dict[str, Outcome] = {}
        for key, d in data["implementations"].items():
            d = dict(d)
            if d.pop("kind") == "failure":
                impls[key] = ImplFailure(**d)
                continue
            d["whole"] = Figures(**d["whole"])
            d["regions"] = {name: Figures(**r) for name, r in d["regions"].items()}
            d["histogram"] = tuple(d["histogram"])
            impls[key] = ImplStats(**d)
        return cls(**{**data, "implementations": impls})

    def timed(self, task_s: float) -> ChunkStats:
        return replace(self, task_s=task_s)


def merge_all(chunks: Sequence[ChunkStats]) -> ChunkStats | None:
    """Merge in the order of the encodings, so that the result does not depend on the order
    in which chunks finished (or on an interruption between them)."""
    return ChunkStats.combine(sorted(chunks, key=lambda c: c.start)) if chunks else None


def results(merged: ChunkStats, impls: Sequence[Implementation],
            span: tuple[int, int]) -> list[SweepResult]:
    """The merged statistics in the schema of ``gelucheck check``, one result per
    implementation, plus the histogram and the count that is not correctly rounded."""
    out = []
    for impl in impls:
        s = merged.implementations.get(key_of(impl))
        if s is None:
            continue
        result = SweepResult(identity(impl, FLOAT32),
                             impl.reference_function.name, impl.how(FLOAT32),
                             [f"0x{span[0]:08x}", f"0x{span[1]:08x}"],
                             merged.n_slow_reference)
        out.append(result)
        if isinstance(s, ImplFailure):
            result.failure = Failure(s.error)
            continue
        regions = [region(name, lo, hi, r.n, r.max_ulp, r.mean_ulp,
                          FLOAT32.from_bits(r.worst_bits), FLOAT32, r.not_correctly_rounded)
                   for name, lo, hi in REGIONS if (r := s.regions.get(name))]
        whole, worst = s.whole, FLOAT32.from_bits(s.whole.worst_bits)
        result.figures = ErrorFigures(
            n_inputs=whole.n, max_ulp=whole.max_ulp, mean_ulp=whole.mean_ulp,
            n_infinite=whole.n - whole.n_finite,
            not_correctly_rounded=whole.not_correctly_rounded, worst_input=float(worst),
            worst_input_hex=FLOAT32.hex(worst), computed=s.computed, exact=s.exact,
            max_abs_error=s.max_abs, max_abs_at=FLOAT32.value_of(s.max_abs_bits),
            regions=regions)
        result.histogram = {"edges": histogram_edges(), "counts": list(s.histogram)}
        # CPU seconds summed over workers: the implementation's own evaluation, the
        # comparison with the reference, and the reference (shared by all in the pass)
        result.eval_s, result.check_s, result.guard_s = s.eval_s, s.check_s, s.guard_s
        result.reference_s = merged.reference_s
        result.task_s = merged.task_s
    return out

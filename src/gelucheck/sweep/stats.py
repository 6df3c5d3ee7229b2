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

    def __add__(self, other: Figures) -> Figures:
        """The figures of two disjoint sets of inputs as one."""
        top = other if other._outranks(self) else self
        return Figures(self.n + other.n, top.max_ulp, top.worst_bits,
                       self.sum_ulp + other.sum_ulp, self.n_finite + other.n_finite,
                       self.not_correctly_rounded + other.not_correctly_rounded)

    @property
    def mean_ulp(self) -> float:
        return self.sum_ulp / self.n_finite if self.n_finite else math.inf


def total(parts: Iterable[Figures]) -> Figures:
    """The figures of disjoint parts (a chunk's regions) as one."""
    out = None
    for part in parts:
        out = part if out is None else out + part
    if out is None:
        raise ValueError("no figures to add up")
    return out


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

    def merge(self, other: ImplStats) -> ImplStats:
        """The statistics of two disjoint chunks as one."""
        top = other if other.whole._outranks(self.whole) else self
        largest = other if ((other.max_abs, -other.max_abs_bits)
                            > (self.max_abs, -self.max_abs_bits)) else self
        regions = dict(self.regions)
        for name, r in other.regions.items():
            regions[name] = regions[name] + r if name in regions else r
        return ImplStats(self.whole + other.whole, regions, largest.max_abs,
                         largest.max_abs_bits,
                         tuple(p + q for p, q in zip(self.histogram, other.histogram)),
                         top.exact, top.computed, self.eval_s + other.eval_s,
                         self.check_s + other.check_s, self.guard_s + other.guard_s)


@dataclass(frozen=True)
class ImplFailure:
    """An implementation that raised on a chunk: the sweep reports it, never a figure."""

    error: str


Outcome = ImplStats | ImplFailure


def merge_outcomes(a: Outcome, b: Outcome) -> Outcome:
    """A failure on either chunk is the implementation's outcome; else the merged figures."""
    if isinstance(a, ImplFailure):
        return a
    if isinstance(b, ImplFailure):
        return b
    return a.merge(b)


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

    def merge(self, other: ChunkStats) -> ChunkStats:
        impls = dict(self.implementations)
        for key, outcome in other.implementations.items():
            impls[key] = merge_outcomes(impls[key], outcome) if key in impls else outcome
        return ChunkStats(self.function, min(self.start, other.start),
                          max(self.stop, other.stop),
                          self.n_slow_reference + other.n_slow_reference,
                          self.reference_s + other.reference_s, impls,
                          self.task_s + other.task_s)

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
    out = None
    for c in sorted(chunks, key=lambda c: c.start):
        out = c if out is None else out.merge(c)
    return out


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

"""One chunk of an exhaustive float32 sweep: planned as blocks, the reference once per block,
every implementation against it (scoring.py), reduced to typed statistics (stats.py) that
merge across blocks, tasks and workers."""
from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from ..backends import Implementation, ImplementationError
from ..checks.regions import REGIONS
from ..formats import FLOAT32
from ..functions import Function, get_function
from . import reference, replay
from .cuts import value_parts
from .inputs import KNOWN_SPAN, Call, Inputs, Run, call, encodings
from .known import Known, is_known, known_part
from .mirror import SIGN, Mirror, Source, mirror_of
from .scoring import (
    Regions,
    Rounded,
    dense_figures,
    every_error_infinite,
    infinite_figures,
    known_figures,
)
from .stats import ChunkStats, ImplFailure, ImplStats, Outcome, key_of

_BOUNDS = [bound for _, lo, hi in REGIONS for bound in (lo, hi)]


def _one_region(first: float, last: float) -> str | None:
    """The region that holds both ends of a monotone run (so all of it), or None."""
    for name, lo, hi in REGIONS:
        if lo <= first < hi:
            return name if lo <= last < hi else None
    return None


def region_slices(x: np.ndarray) -> list[tuple[str, slice]]:
    """Each region's part of a chunk, which is monotone in x (one sign of encodings)."""
    if len(x) and (name := _one_region(float(x[0]), float(x[-1]))):  # as nearly every
        return [(name, slice(0, len(x)))]  # block's ends are: no search
    # each region's part lies between its two bounds: the parts of odd index
    return [(name, slice(a, b)) for (name, _, _), (a, b)
            in zip(REGIONS, value_parts(x, _BOUNDS)[1::2]) if b > a]


BLOCK = 1 << 17  # inner block: NumPy's temporaries stay in cache and in malloc's free lists
# Where one compiled loop computes the reference (reference.one_compiled_run) a block's work is
# arithmetic, not memory: twice as large halves the Python around it per input. The plan
# steps by it, so that a closed-form run starts at the first of these a span's closed form
# covers (its figures exact, a block's good to 2^-16 ulp); two of them in one aligned span
# that one loop computes are then one block (MERGED_BLOCK): the implementation's calls and
# the block's Python halve again (docs/design.md, The sweep, has the CPUs where it counts)
COMPILED_BLOCK = 1 << 18
MERGED_BLOCK = 2 * COMPILED_BLOCK
if MERGED_BLOCK > KNOWN_SPAN:  # a task's input array holds KNOWN_SPAN (Inputs.block)
    raise RuntimeError(f"MERGED_BLOCK {MERGED_BLOCK} exceeds KNOWN_SPAN {KNOWN_SPAN}")


def evaluate(impls: Sequence[Implementation], function: str | Function, start: int,
             stop: int) -> ChunkStats:
    """Statistics of each implementation over the encodings [start, stop) (one sign, finite),
    computed block by block and merged."""
    return evaluate_job(impls, function, ((start, stop),))[0]


def evaluate_job(impls: Sequence[Implementation], function: str | Function,
                 job: Sequence[tuple[int, int]]) -> list[ChunkStats]:
    """Each task of a job (runner.jobs): one, or a positive task and its negative mirror,
    whose blocks then run interleaved, each positive block's mirror just after it, and take
    its figures where an implementation's outputs are opposite (sweep/mirror.py) - the
    function's reference must be exactly odd."""
    begun = time.perf_counter()
    function = get_function(function)
    mirror = _mirror_for(function, job)
    plans = [block_plan(function, *task) for task in job]
    order = _interleaved(*plans) if mirror is not None else [(0, entry) for entry in plans[0]]
    inputs = Inputs()
    parts: list[list[ChunkStats]] = [[] for _ in job]
    spent = [time.perf_counter() - begun] + [0.0] * (len(job) - 1)  # each task's own time
    for k, (t, (a, b, known)) in enumerate(order):
        clock = time.perf_counter()
        following = order[k + 1][1][0] if k + 1 < len(order) else None
        given: list[Call] = []
        if known:
            if mirror is not None:
                mirror.forget()  # its implementations called on other inputs
            part, a, given = _known_run(impls, function, a, b, inputs, following)
            if part is not None:
                parts[t].append(part)
        while a < b:  # a block; or what a run left, from a span its outputs were not the
            end = min(a + KNOWN_SPAN, b)  # closed form's on, span by span
            inputs.following = end if end < b else following
            parts[t].append(evaluate_block(impls, function, a, end, inputs, given, mirror))
            a, given = end, []
        spent[t] += time.perf_counter() - clock
    out = []
    for task, mine, own_s in zip(job, parts, spent):
        clock = time.perf_counter()
        if not mine:
            raise ValueError(f"no encodings in [{task[0]:#x}, {task[1]:#x})")
        merged = ChunkStats.combine(mine)  # one pass, not a merge and its objects per block
        # all of it: blocks, merging, bookkeeping
        out.append(merged.timed(own_s + time.perf_counter() - clock))
    return out


def _mirror_for(function: Function, job: Sequence[tuple[int, int]]) -> Mirror | None:
    """The Mirror of a job of a positive task and its mirror (None for one task); any other
    job, or a pair where the function's reference is not mirrored, refused."""
    if len(job) == 1:
        return None
    if len(job) != 2 or job[1] != mirror_of(job[0]) or job[0][0] >= job[1][0]:
        raise ValueError(f"a job is one task or a positive task and its mirror, not {job}")
    if not reference.spec(function).mirrored:
        raise ValueError(f"{function.name}'s reference is not mirrored (SweepSpec.mirrored): "
                         "its tasks are not paired")
    return Mirror()


Entry = tuple[int, int, bool]  # block_plan's: first, stop, whether known in closed form


def _interleaved(positive: list[Entry], negative: list[Entry]) -> list[tuple[int, Entry]]:
    """The two tasks' plans as one order, (0 or 1 for the positive or negative task, its
    entry): each negative entry as soon as the positive entries before cover its
    magnitudes, so that a positive block's mirror comes just after it."""
    order: list[tuple[int, Entry]] = []
    n = 0
    for entry in positive:
        order.append((0, entry))
        while n < len(negative) and negative[n][1] ^ SIGN <= entry[1]:
            order.append((1, negative[n]))
            n += 1
    return order + [(1, entry) for entry in negative[n:]]


def block_plan(function: Function, start: int, stop: int) -> list[tuple[int, int, bool]]:
    """[start, stop) as blocks (first, stop, whether known in closed form): runs of aligned
    spans of KNOWN_SPAN scored in closed form (known.Known) in one region - consecutive
    spans that is_known as one run -, COMPILED_BLOCK where one compiled loop computes the
    reference, else BLOCK."""
    if stop > start:
        first, last = FLOAT32.value_of(start), FLOAT32.value_of(stop - 1)
        if is_known(function, first, last) and _one_region(first, last):
            return [(start, stop, True)]  # what _span_plan's spans merge into (the far
            # left, the right: half of GELU's tasks), without a test per span
    return _span_plan(function, start, stop)


def _span_plan(function: Function, start: int, stop: int) -> list[tuple[int, int, bool]]:
    """block_plan, span by span, then its compiled blocks merged in pairs (_merged)."""
    out: list[tuple[int, int, bool]] = []
    a = start
    while a < stop:
        b = min(a - a % KNOWN_SPAN + KNOWN_SPAN, stop)
        first = FLOAT32.value_of(a)
        if is_known(function, first, last := FLOAT32.value_of(b - 1)):
            if out and out[-1][2]:  # a run so far: this span too, where one Known
                run_first = FLOAT32.value_of(out[-1][0])  # and one region cover both
                if is_known(function, run_first, last) and _one_region(run_first, last):
                    out[-1] = (out[-1][0], b, True)
                    a = b
                    continue
            out.append((a, b, _one_region(first, last) is not None))
        else:
            b = min(a + COMPILED_BLOCK, stop)
            if not reference.one_compiled_run(function, first, FLOAT32.value_of(b - 1)):
                b = min(a + BLOCK, stop)
            out.append((a, b, False))
        a = b
    return _merged(function, out)


def _merged(function: Function, plan: list[Entry]) -> list[Entry]:
    """Each two consecutive blocks of COMPILED_BLOCK that make an aligned MERGED_BLOCK whose
    reference one compiled loop computes, as one block."""
    out: list[Entry] = []
    for a, b, known in plan:
        if out and not known and b - a == COMPILED_BLOCK:
            first, end, before_known = out[-1]
            if (not before_known and end == a and end - first == COMPILED_BLOCK
                    and first % MERGED_BLOCK == 0 and reference.one_compiled_run(
                        function, FLOAT32.value_of(first), FLOAT32.value_of(b - 1))):
                out[-1] = (first, b, False)
                continue
        out.append((a, b, known))
    return out


class _Reference:
    """A block's exact values (v, and float32's ulp of them), computed on first need: a block
    whose every implementation returns the closed form's results needs none. Its seconds
    start with the block's set-up."""

    def __init__(self, function: Function, bits: np.ndarray, start: int,
                 inputs: Inputs | None, setup_s: float):
        self.function, self.bits, self.start, self.inputs = function, bits, start, inputs
        self.seconds, self.n_slow = setup_s, 0
        self._values: tuple[np.ndarray, np.ndarray] | None = None
        self.doubts = np.zeros(0, dtype=np.int64)  # the inputs resolved

    @property
    def computed(self) -> bool:
        return self._values is not None

    def values(self) -> tuple[np.ndarray, np.ndarray]:
        if self._values is None:
            begun = time.perf_counter()
            if self.inputs is not None and self.inputs.holds is not None:  # the last guard
                encodings(self.start, self.start + len(self.bits), self.bits)  # wrote the
                self.inputs.holds = None  # next block's inputs: this block's again
            v, unit, self.doubts = reference.values_and_doubts(
                self.function, self.bits.view(np.float32), monotone=True)
            self._values, self.n_slow = (v, unit), len(self.doubts)
            self.seconds += time.perf_counter() - begun
        return self._values

    def value_at(self, i: int) -> float:
        """v at the block's input i: the block's, where computed, else that input's alone."""
        if self._values is not None:
            return float(self._values[0][i])
        begun = time.perf_counter()
        x = np.array([self.start + i], dtype=np.uint32).view(np.float32)
        v, _, slow = reference.values(self.function, x)
        self.n_slow += slow
        self.seconds += time.perf_counter() - begun
        return float(v[0])

    def replayed(self, key: str, y: np.ndarray) -> ImplStats | None:
        """replay.replayed's figures for y, its proofs counted as the reference's."""
        begun = time.perf_counter()
        out = replay.replayed(self.function, key, self.start, y)
        self.seconds += time.perf_counter() - begun
        if out is None:
            return None
        self.n_slow = out.proven  # the same inputs whichever implementation replays
        return out.stats


class _BlockScorer:
    """Each output of a block scored once: in closed form where the block's results are
    known and the output is those; as an alias where an earlier implementation returned the
    very same floats (F.gelu and nn.GELU, eager and compiled); without a comparison where
    every output is NaN or infinite (its errors are infinite whatever the exact values: a
    block whose reference waits for its first need - closed-form, replayable - never
    computes it); as the positive block's mirrored where the outputs are its outputs
    negated (``source``: sweep/mirror.py); else against the reference, in bit space first
    where several implementations share the rounded results (and, given ``keeping``, kept
    for the negative block)."""

    def __init__(self, reference: _Reference, regions: Regions, known: Known | None,
                 run: Run, inputs: Inputs | None, alone: bool, replayable: bool,
                 source: Source | None = None, keeping: Mirror | None = None):
        self.reference, self.regions, self.known, self.run = reference, regions, known, run
        self.inputs, self.alone, self.replayable = inputs, alone, replayable
        self.source, self.keeping = source, keeping
        self.rounded: Rounded | None = None  # the correctly rounded results, once needed
        self.scored: list[tuple[np.ndarray, ImplStats]] = []  # (outputs, their figures)

    def _rewritten(self) -> bool:
        """Whether the array holds the next block's inputs already (the last guard's)."""
        return self.inputs is not None and self.inputs.holds is not None

    def score(self, y: np.ndarray, x: np.ndarray, key: str, keep: bool) -> ImplStats:
        """The figures of outputs y of inputs x by the implementation ``key`` (``keep``: a
        later one may alias them)."""
        start = self.run.start
        if self.known is not None and (self.known.matches_run(y, start) if self._rewritten()
                                       else self.known.matches(y, x)):  # (NumPy's reads x)
            return known_figures(self.known, self.run, start, self.regions[0][0])
        if same := next((stats for seen, stats in self.scored if _same(y, seen)), None):
            return same  # |y - exact| alike (±0 too)
        if self.source is not None and (
                mirrored := self.source.figures(key, y, self.regions[0][0])) is not None:
            if keep:
                self.scored.append((y, mirrored))
            return mirrored
        if every_error_infinite(y):  # whatever the exact values: one of them is needed
            stats = infinite_figures(y, start, self.regions)
            stats = replace(stats, exact=self.reference.value_at(0))
            if keep:
                self.scored.append((y, stats))
            return stats
        if self.replayable and (replayed := self.reference.replayed(key, y)) is not None:
            return replayed
        v, unit = self.reference.values()
        if self.alone:  # nothing to share: the bit-space pass would only add to the cost
            stats = dense_figures(y, v, unit, start, self.regions)
        else:
            self.rounded = self.rounded or Rounded(v, unit, start, self.regions)
            stats = self.rounded.score(y)
        stats = replace(stats, exact=float(v[stats.whole.worst_bits - start]))
        if self.replayable:
            replay.remember(self.reference.function, key, start, y, stats,
                            self.reference.doubts, v, unit)
        if self.keeping is not None:
            self.keeping.keep(key, y, stats,
                              None if self.inputs is None else self.inputs.array)
        if keep:
            self.scored.append((y, stats))
        return stats


def evaluate_block(impls: Sequence[Implementation], function: Function, start: int,
                   stop: int, inputs: Inputs | None = None,
                   given: Sequence[Call] = (), mirror: Mirror | None = None) -> ChunkStats:
    """The statistics of each implementation over one block, whose inputs are in ``inputs``
    where given (evaluate's, which the last implementation's test may rewrite as the next
    block's), else in an array of their own. ``given``: the calls of the first implementations
    already made on this block (by a run that stopped here), not made again. ``mirror``: a
    job's (evaluate_job), which keeps a positive block scored in full and gives it back to
    its negative mirror."""
    if stop - start > KNOWN_SPAN:
        raise ValueError(f"a block holds at most {KNOWN_SPAN} encodings, not {stop - start}")
    clock = time.perf_counter()
    bits = inputs.block(start, stop) if inputs is not None else encodings(start, stop)
    x = bits.view(np.float32)
    regions = region_slices(x)
    # where the results and their errors follow in closed form (the far left, the saturated
    # right, |x| < 2^-25), an implementation that returns the correctly rounded results needs
    # no float64 pass: the reference is computed only for the others
    known = known_part(function, x) if len(regions) == 1 else None
    # where an earlier binade's block may be replayed (replay.py), the reference waits too
    replayable = len(regions) == 1 and replay.applies(function, start, stop)
    full = known is None and not replayable  # every output against the reference
    # (a negative block takes what the block just before kept, if it is its mirror)
    source = mirror.source(start, stop) if mirror is not None and start >= SIGN else None
    if not full or len(regions) != 1:
        source = None
    ref = _Reference(function, bits, start, inputs, time.perf_counter() - clock)
    if full and source is None:
        ref.values()
    scorer = _BlockScorer(ref, regions, known, Run(start, stop - start), inputs,
                          alone=len(impls) == 1, replayable=replayable, source=source,
                          keeping=mirror if start < SIGN else None)
    outcomes: dict[str, Outcome] = {}
    for position, impl in enumerate(impls, 1):
        last = position == len(impls)
        try:
            made = (given[position - 1] if position <= len(given) else
                    call(impl, x, start, inputs if last else None))
        except ImplementationError as exc:
            outcomes[key_of(impl)] = ImplFailure(str(exc))
            encodings(start, stop, bits)  # it may have written to them: the next
            if inputs is not None:  # implementation gets the block's inputs again
                inputs.holds = None
            continue
        checking, reference_s = time.perf_counter(), ref.seconds
        stats = scorer.score(made.y, x, key_of(impl), keep=not last)
        # the reference's time, if it was computed for this one, is its own, not the check's
        check_s = time.perf_counter() - checking - (ref.seconds - reference_s)
        outcomes[key_of(impl)] = replace(
            stats, computed=float(made.y[stats.whole.worst_bits - start]),
            eval_s=made.eval_s, guard_s=made.guard_s, check_s=check_s)
    if scorer.keeping is not None:
        scorer.keeping.close(start, stop, ref.n_slow)
    # a block mirrored for every implementation proves nothing itself: its doubts are the
    # positive block's, mirrored (SweepSpec.mirrored)
    n_slow = ref.n_slow if source is None or ref.computed else source.n_slow
    return ChunkStats(function.name, start, stop, n_slow, ref.seconds, outcomes)


def _known_run(impls: Sequence[Implementation], function: Function, start: int, stop: int,
               inputs: Inputs, following: int | None
               ) -> tuple[ChunkStats | None, int, list[Call]]:
    """The figures of a run of closed-form spans [start, stop) (block_plan: one region, one
    Known), each implementation called span by span (KNOWN_SPAN: its inputs and outputs stay
    in the cache), its outputs checked against the closed form's results, and its figures
    computed once for the run: a span's own Python (the block's set-up, the closed form's
    figures, merging) was a tenth of torch's GELU's time there. Stops at the first span
    where an implementation's outputs are not those results, or it fails: returns the figures
    up to there (None for none), where that is (stop when all of it) and the calls made on
    that span, for evaluate to go on span by span with evaluate_block, which makes only the
    others (all of them again where an output shares the inputs' memory, which a rewrite for
    the next span may have changed: at most once per run)."""
    known = _KnownRun(function, impls, start, stop)
    a = start
    while a < stop:
        b = min(a + KNOWN_SPAN, stop)
        inputs.following = b if b < stop else following
        x = inputs.block(a, b).view(np.float32)
        calls: list[Call] = []  # each implementation's, counted once all of them match
        check_s: list[float] = []
        for position, impl in enumerate(impls, 1):
            try:
                made = call(impl, x, a, inputs if position == len(impls) else None)
            except ImplementationError:  # evaluate_block records it
                inputs.holds = None
                return known.figures(a), a, _reusable(calls, inputs)
            checked = time.perf_counter()
            calls.append(made)
            if not known.known.matches_run(made.y, a):
                return known.figures(a), a, _reusable(calls, inputs)
            check_s.append(time.perf_counter() - checked)
        for key, made, checking in zip(map(key_of, impls), calls, check_s):
            known.spent[key].add(made, checking, first=a == start)
        a = b
    return known.figures(stop), stop, []


class _KnownRun:
    """A run of closed-form spans from ``start`` (block_plan's: one region, one Known) and
    each implementation's part of it so far."""

    def __init__(self, function: Function, impls: Sequence[Implementation], start: int,
                 stop: int):
        clock = time.perf_counter()
        run = Run(start, stop - start)
        known, region = known_part(function, run), _one_region(run[0], run[-1])
        if known is None or region is None:
            raise ValueError(f"[{start:#x}, {stop:#x}) is no closed-form run of {function}")
        self.function, self.start, self.known, self.region = function, start, known, region
        self.spent = {key_of(impl): _Spent() for impl in impls}
        self.setup_s = time.perf_counter() - clock

    def figures(self, stop: int) -> ChunkStats | None:
        """The figures of [start, stop), where every implementation returned the closed
        form's results; None for none."""
        if stop == self.start:
            return None
        begun = time.perf_counter()
        figures = known_figures(self.known, Run(self.start, stop - self.start), self.start,
                                self.region)  # alike for all of them
        closed_form_s = time.perf_counter() - begun  # (the first one's check: as an alias's)
        outcomes: dict[str, Outcome] = {}
        for key, spent in self.spent.items():
            outcomes[key] = replace(
                figures, computed=spent.first if figures.whole.worst_bits == self.start
                else spent.last, eval_s=spent.eval_s, guard_s=spent.guard_s,
                check_s=spent.check_s + closed_form_s)
            closed_form_s = 0.0
        return ChunkStats(self.function.name, self.start, stop, 0, self.setup_s, outcomes)


class _Spent:
    """An implementation's part of a run so far: its times, and its outputs at the run's
    first input and at the last input of the spans done (the worst error lies at an end)."""

    def __init__(self) -> None:
        self.eval_s = self.guard_s = self.check_s = 0.0
        self.first = self.last = math.nan

    def add(self, made: Call, check_s: float, first: bool) -> None:
        """One more span, whose call is ``made`` (``first``: the run's first span)."""
        self.eval_s += made.eval_s
        self.guard_s += made.guard_s
        self.check_s += check_s
        if first:
            self.first = float(made.y[0])
        self.last = float(made.y[-1])


def _reusable(calls: list[Call], inputs: Inputs) -> list[Call]:
    """The calls, unless an output shares the inputs' memory (an implementation that returns
    its input): then none, made again."""
    return [] if any(np.may_share_memory(c.y, inputs.array) for c in calls) else calls


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """np.array_equal, most unequal pairs decided on a prefix: two implementations that
    differ at all differ within their first few hundred outputs of a block (the full
    comparison costs as much for every pair)."""
    return np.array_equal(a[:256], b[:256]) and np.array_equal(a, b)


def finite_ranges(start: int = 0, stop: int = 1 << 32) -> list[tuple[int, int]]:
    """The finite encodings within [start, stop), split at the sign: [0, +inf), [-0, -inf)."""
    out = []
    for a, b in ((0, 0x7F800000), (0x80000000, 0xFF800000)):
        lo, hi = max(a, start), min(b, stop)
        if hi > lo:
            out.append((lo, hi))
    return out


def hex32(bits: int) -> str:
    return f"0x{bits:08x}"

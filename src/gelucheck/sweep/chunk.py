"""One chunk of an exhaustive float32 sweep: the reference once, every implementation
against it, reduced to mergeable statistics (sums, maxima, a histogram) per region."""
from __future__ import annotations

import functools
import math
import time
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from ..backends import Implementation, ImplementationError
from ..checks.regions import REGIONS
from ..formats import FLOAT32
from ..functions import Function, get_function
from . import fastref, loops
from .fastref import reference
from .known import Known, is_known, known_part
from .stats import BINS, combine, histogram, merge_chunks

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
    ascending = len(x) < 2 or not np.signbit(x[-1])
    key = x if ascending else x[::-1]  # ascending either way (a view)
    # every bound at once, as x's own dtype (they are exact in it): a float64 bound would
    # make searchsorted convert the whole block
    cuts = np.searchsorted(key, np.array(_BOUNDS, dtype=x.dtype), "left").tolist()
    if not ascending:
        cuts = [len(x) - c for c in cuts]
    out = []
    for (name, _, _), a, b in zip(REGIONS, cuts[0::2], cuts[1::2]):
        a, b = (a, b) if ascending else (b, a)
        if b > a:
            out.append((name, slice(a, b)))
    return out


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


def _stats(score: Score, first: int, n: int) -> dict:
    """n, the largest error and where (the encoding: ``first`` is the first input's), the sum
    of the finite errors and the counts."""
    return {"n": n, "max_ulp": float(score.max_ulp), "worst_bits": first + score.worst,
            "sum_ulp": float(score.sum_ulp), "n_finite": n - int(score.infinite),
            "not_correctly_rounded": int(score.above_half)}


def _largest(parts: list[tuple[float, int]]) -> tuple[float, int]:
    """The largest of (|y - v|, index) pairs of disjoint parts as np.argmax picks it over
    the whole: the first NaN, else the first largest."""
    nans = [i for size, i in parts if math.isnan(size)]
    if nans:
        return math.nan, min(nans)
    return max(parts, key=lambda p: (p[0], -p[1]))


BLOCK = 1 << 17  # inner block: NumPy's temporaries stay in cache and in malloc's free lists
# Where one compiled loop computes the reference (fastref.one_compiled_run) a block's work is
# arithmetic, not memory: twice as large halves the Python around it per input (2^19 no
# faster, 2^20 slower: the arrays leave the cache)
COMPILED_BLOCK = 1 << 18
# A run scored in closed form (known.Known) needs no float64 array: its implementations are
# called in spans of this many, aligned (so within a binade; _known_run).
# 2^19: its inputs and outputs, 4 MB a worker, leave the last-level cache to the other
# workers - with two, `gelucheck sweep` of torch's GELU took less in 28 of 34 alternating
# pairs of runs against 2^20 (one tie; medians 2-5% less, 2^20's runs the slow outliers);
# one process alone does better with 2^20 (3%); 2^18, 2^21 slower (docs/design.md, The sweep)
KNOWN_SPAN = 1 << 19
_OFFSETS = np.arange(KNOWN_SPAN, dtype=np.uint32)  # a block's encodings: start + these


def evaluate(impls: list[Implementation], function: str | Function, start: int, stop: int) -> dict:
    """Statistics of each implementation over the encodings [start, stop) (one sign, finite),
    computed block by block and merged."""
    begun = time.perf_counter()
    function = get_function(function)
    out = None
    inputs = Inputs()
    blocks = block_plan(function, start, stop)
    for k, (a, b, known) in enumerate(blocks):
        following = blocks[k + 1][0] if k + 1 < len(blocks) else None
        parts, given = [], []
        if known:
            part, a, given = _known_run(impls, function, a, b, inputs, following)
            parts.append(part)
        while a < b:  # a block; or what a run left, from a span its outputs were not the
            end = min(a + KNOWN_SPAN, b)  # closed form's on, span by span
            inputs.following = end if end < b else following
            parts.append(evaluate_block(impls, function, a, end, inputs, given))
            a, given = end, []
        for part in filter(None, parts):
            out = part if out is None else merge_chunks(out, part)
    out["task_s"] = time.perf_counter() - begun  # all of it: blocks, merging, bookkeeping
    return out


def block_plan(function: Function, start: int, stop: int) -> list[tuple[int, int, bool]]:
    """[start, stop) as blocks (first, stop, whether known in closed form): runs of aligned
    spans of KNOWN_SPAN scored in closed form (known.Known) in one region - consecutive
    spans that is_known as one run -, COMPILED_BLOCK where one compiled loop computes the
    reference, else BLOCK."""
    out = []
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
            if not fastref.one_compiled_run(function, first, FLOAT32.value_of(b - 1)):
                b = min(a + BLOCK, stop)
            out.append((a, b, False))
        a = b
    return out


class Inputs:
    """A task's input array, one block's encodings at a time. Where the block's last
    implementation left them intact, the pass that tests them rewrites them as the next
    block's (``following``: where that starts) - a write pass less per block, and the test's
    read then costs little more (docs/design.md, The sweep)."""

    def __init__(self):
        self.array = np.empty(KNOWN_SPAN, dtype=np.uint32)
        self.following: int | None = None  # the next block's start, if it is this task's
        self.holds: tuple[int, int] | None = None  # (first encoding, count) written already

    def block(self, start: int, stop: int) -> np.ndarray:
        """The block's inputs, written unless the last test wrote them."""
        bits = self.array[:stop - start]
        held = self.holds[1] if self.holds and self.holds[0] == start else 0
        if held < len(bits):
            _encodings(start + held, stop, bits[held:])
        self.holds = None
        return bits


class Run:
    """The float32 inputs of a block read off their encodings, indexed as an array: what the
    figures after an implementation's call are computed from, never the block's array, which
    may hold the next block's inputs by then."""

    def __init__(self, start: int, n: int):
        self.start, self.n = start, n
        self._values = {}  # index: value - the closed form reads each end a few times

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> float:
        if not -self.n <= i < self.n:
            raise IndexError(i)
        i %= self.n
        if (value := self._values.get(i)) is None:
            value = self._values[i] = FLOAT32.value_of(self.start + i)
        return value


def evaluate_block(impls: list[Implementation], function: Function, start: int, stop: int,
                    inputs: Inputs | None = None, given: Sequence[Call] = ()) -> dict:
    """The statistics of each implementation over one block, whose inputs are in ``inputs``
    where given (evaluate's, which the last implementation's test may rewrite as the next
    block's), else in an array of their own. ``given``: the calls of the first implementations
    already made on this block (by a run that stopped here), not made again."""
    if stop - start > KNOWN_SPAN:
        raise ValueError(f"a block holds at most {KNOWN_SPAN} encodings, not {stop - start}")
    clock = time.perf_counter()
    bits = inputs.block(start, stop) if inputs is not None else _encodings(start, stop)
    x = bits.view(np.float32)
    regions = region_slices(x)
    # where the results and their errors follow in closed form (the far left, the saturated
    # right, |x| < 2^-25), an implementation that returns the correctly rounded results needs
    # no float64 pass: the reference is computed only for the others
    known = known_part(function, x) if len(regions) == 1 else None
    out = {"function": function.name, "start": start, "stop": stop, "n_slow_reference": 0,
           "implementations": {}, "reference_s": time.perf_counter() - clock}  # the setup
    ref = None  # (v, unit), once needed
    run = Run(start, stop - start)  # the inputs, once an implementation has been called

    def rewritten() -> bool:
        """Whether the array holds the next block's inputs already (the last guard's)."""
        return inputs is not None and inputs.holds is not None

    def reference_values():
        nonlocal ref
        if ref is None:
            begun = time.perf_counter()
            if rewritten():  # this block's inputs again
                _encodings(start, stop, bits)
                inputs.holds = None
            v, unit, out["n_slow_reference"] = reference(function, x, monotone=True)
            ref = v, unit
            out["reference_s"] += time.perf_counter() - begun
        return ref

    if known is None:
        reference_values()
    shared = None  # what the correctly rounded results score, computed once per block
    scored = []  # (outputs, statistics) of this block so far: aliases (F.gelu and nn.GELU,
    # eager and compiled) often return the very same floats, whose figures are the same
    for position, impl in enumerate(impls, 1):
        key = f"{impl.id}/{impl.function.name}"
        try:
            call = (given[position - 1] if position <= len(given) else
                    _call(impl, x, start, inputs if position == len(impls) else None))
        except ImplementationError as exc:
            out["implementations"][key] = {"error": str(exc)}
            _encodings(start, stop, bits)  # it may have written to them: the next
            # implementation gets the block's inputs again
            if inputs is not None:
                inputs.holds = None
            continue
        y, checking = call.y, time.perf_counter()
        if known is not None and (known.matches_run(y, start) if rewritten()
                                  else known.matches(y, x)):  # (NumPy's check reads x)
            stats = _known(known, run, start, regions[0][0])
        elif same := next((seen_stats for seen, seen_stats in scored
                           if _same(y, seen)), None):  # |y - exact| alike (±0 too)
            stats = dict(same)  # the top level, which gets this one's timings: merging
            # builds new regions and histograms, never changes them (a deep copy cost 5% of
            # the middle's blocks with torch's four GELUs)
        else:
            v, unit = reference_values()
            checking = time.perf_counter()  # the reference's time is its own, not the check's
            if len(impls) == 1:  # nothing to share: the bit-space pass would only add to the cost
                stats = dense_figures(y, v, unit, start, regions)
            else:
                shared = shared or Rounded(v, unit, start, regions)
                stats = shared.score(y)
            stats["exact"] = float(v[stats["worst_bits"] - start])
            if position < len(impls):  # a later one may alias it
                scored.append((y, dict(stats)))
        stats.update({"computed": float(y[stats["worst_bits"] - start]),
                      "eval_s": call.eval_s, "guard_s": call.guard_s,
                      "check_s": time.perf_counter() - checking})
        out["implementations"][key] = stats
    return out


def _known_run(impls: list[Implementation], function: Function, start: int, stop: int,
                inputs: Inputs, following: int | None) -> tuple[dict | None, int, list[Call]]:
    """The figures of a run of closed-form spans [start, stop) (block_plan: one region, one
    Known), each implementation called span by span (KNOWN_SPAN: its inputs and outputs stay
    in the cache), its outputs checked against the closed form's results, and its figures
    computed once for the run: a span's Python (about 30 us: the block's set-up, the closed
    form's figures, merging) cost 10% of torch's GELU's time there. Stops at the first span
    where an implementation's outputs are not those results, or it fails: returns the figures
    up to there (None for none), where that is (stop when all of it) and the calls made on
    that span, for evaluate to go on span by span with evaluate_block, which makes only the
    others (all of them again where an output shares the inputs' memory, which a rewrite for
    the next span may have changed: at most once per run)."""
    clock = time.perf_counter()
    run = Run(start, stop - start)
    known = known_part(function, run)
    region = _one_region(run[0], run[-1])
    done = {f"{impl.id}/{impl.function.name}": _Spent() for impl in impls}
    setup = time.perf_counter() - clock

    def figures(end: int) -> dict | None:
        return _known_figures(function, known, region, done, start, end, setup)

    a = start
    while a < stop:
        b = min(a + KNOWN_SPAN, stop)
        inputs.following = b if b < stop else following
        x = inputs.block(a, b).view(np.float32)
        calls, check_s = [], []  # each implementation's, counted once all of them match
        for position, impl in enumerate(impls, 1):
            try:
                call = _call(impl, x, a, inputs if position == len(impls) else None)
            except ImplementationError:  # evaluate_block records it
                inputs.holds = None
                return figures(a), a, _reusable(calls, inputs)
            checked = time.perf_counter()
            calls.append(call)
            if not known.matches_run(call.y, a):
                return figures(a), a, _reusable(calls, inputs)
            check_s.append(time.perf_counter() - checked)
        for spent, call, checking in zip(done.values(), calls, check_s):
            spent.add(call, checking, first=a == start)
        a = b
    return figures(stop), stop, []


class _Spent:
    """An implementation's part of a run so far: its times, and its outputs at the run's
    first input and at the last input of the spans done (the worst error lies at an end)."""

    def __init__(self):
        self.eval_s = self.guard_s = self.check_s = 0.0
        self.first = self.last = None

    def add(self, call: Call, check_s: float, first: bool) -> None:
        """One more span, whose call is ``call`` (``first``: the run's first span)."""
        self.eval_s += call.eval_s
        self.guard_s += call.guard_s
        self.check_s += check_s
        if first:
            self.first = float(call.y[0])
        self.last = float(call.y[-1])


def _reusable(calls: list[Call], inputs: Inputs) -> list[Call]:
    """The calls, unless an output shares the inputs' memory (an implementation that returns
    its input): then none, made again."""
    return [] if any(np.may_share_memory(c.y, inputs.array) for c in calls) else calls


def _known_figures(function: Function, known: Known, region: str, done: dict[str, _Spent],
                   start: int, stop: int, setup: float) -> dict | None:
    """_known_run's figures for [start, stop), where every implementation returned the
    closed form's results (``done``: their times and outputs at the ends); None for none."""
    if stop == start:
        return None
    clock = time.perf_counter()
    figures = _known(known, Run(start, stop - start), start, region)  # alike for all of them
    closed_form_s = time.perf_counter() - clock  # (the first one's check: as for an alias)
    out = {"function": function.name, "start": start, "stop": stop, "n_slow_reference": 0,
           "implementations": {}, "reference_s": setup}
    for key, spent in done.items():
        stats = dict(figures)  # the top level: merging never changes regions or histograms
        stats.update({"computed": spent.first if figures["worst_bits"] == start else spent.last,
                      "eval_s": spent.eval_s, "guard_s": spent.guard_s,
                      "check_s": spent.check_s + closed_form_s})
        out["implementations"][key] = stats
        closed_form_s = 0.0
    return out


def _encodings(start: int, stop: int, into: np.ndarray | None = None) -> np.ndarray:
    """The encodings [start, stop) as uint32, a block's inputs: written into the start of
    ``into`` where given (a task's Inputs), else into a new array."""
    out = np.empty(stop - start, dtype=np.uint32) if into is None else into[:stop - start]
    if (compiled := loops.kernels()) is not None:
        compiled.encodings(out, np.uint32(start))
    else:
        np.add(_OFFSETS[:stop - start], np.uint32(start), out=out)  # not np.arange: 3x slower
    return out


def _consecutive(x: np.ndarray, first: int) -> bool:
    """Whether x still holds the encodings from ``first`` on, bit for bit: the test that
    lets a sweep hand its block's inputs to an implementation without a copy."""
    bits = x.view(np.uint32)
    if (compiled := loops.kernels()) is not None:
        return bool(compiled.consecutive(bits, np.uint32(first)))
    return np.array_equal(bits, _encodings(first, first + len(x)))


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """np.array_equal, most unequal pairs decided on a prefix: two implementations that
    differ at all differ within their first few hundred outputs of a block (the full
    comparison costs as much for every pair)."""
    return np.array_equal(a[:256], b[:256]) and np.array_equal(a, b)


class Call(NamedTuple):
    """An implementation's outputs for a block, its own time and its input guard's."""

    y: np.ndarray
    eval_s: float
    guard_s: float


def _call(impl: Implementation, x: np.ndarray, first: int, inputs: Inputs | None) -> Call:
    """impl on a block's inputs x (the encodings from ``first`` on), timed apart from the
    guard that tests them intact afterwards - and, given ``inputs`` (for a block's last
    implementation), rewrites them as the next block's (_Guard). Raises ImplementationError."""
    clock = time.perf_counter()
    guard = _Guard(first, inputs)
    y = impl(x, intact=guard)
    return Call(y, time.perf_counter() - clock - guard.seconds, guard.seconds)


class _Guard:
    """The test that an implementation left its block's inputs intact (_consecutive),
    timed: it is gelucheck's cost, not the implementation's, and --profile shows it apart."""

    def __init__(self, first: int, inputs: Inputs | None = None):
        self.first, self.seconds, self.inputs = first, 0.0, inputs

    def __call__(self, x: np.ndarray, out=None) -> bool:
        """Whether x is intact; and, for a block's last implementation (``inputs`` given)
        whose outputs ``out`` are an array of their own, x rewritten as the next block's
        inputs in the same pass - unless it was not intact (then partly: the sweep writes
        the block's inputs again)."""
        begun = time.perf_counter()
        following = self.inputs.following if self.inputs is not None else None
        compiled = loops.kernels()
        if (following is not None and compiled is not None and isinstance(out, np.ndarray)
                and not np.may_share_memory(out, x)):
            intact = bool(compiled.consecutive_then(x.view(np.uint32), np.uint32(self.first),
                                                    np.uint32(following)))
            self.inputs.holds = (following, len(x)) if intact else None
        else:
            intact = _consecutive(x, self.first)
        self.seconds += time.perf_counter() - begun
        return intact


def _known(known: Known, x, first: int, region: str) -> dict:
    """What dense_figures gives, in closed form, for outputs that are ``known``'s results on a run
    of inputs x (an array or a Run) from the encoding ``first`` on, in one region: no error
    is above 1/2. |r| is monotone in |x|, so the largest error lies at an end of the run or
    at the doubled input (the lower on a tie, as argmax)."""
    n = len(x)
    ends = sorted({0, n - 1})
    candidates = sorted(set(ends) if known.doubled is None else {*ends, known.doubled})
    worst = max(candidates, key=lambda i: known.error(x, i))
    largest = max(ends, key=lambda i: abs(known.residual(x, i)))
    stats = {"n": n, "max_ulp": known.error(x, worst), "worst_bits": first + worst,
             "sum_ulp": known.error_sum(x), "n_finite": n, "not_correctly_rounded": 0}
    counts = [0] * BINS
    counts[0] = n
    result = dict(stats)
    result.update({"max_abs": abs(known.residual(x, largest)),
                   "max_abs_bits": first + largest, "histogram": counts,
                   "regions": {region: stats},
                   "exact": known.result(first + worst) + known.residual(x, worst)})
    return result


DENSE = 16  # more outputs than 1 in DENSE not correctly rounded: measure all of them
# the first outputs, whose share not correctly rounded decides that before the block is
# rounded: torch's GELUs are dense in all the middle, where the rounding pass and the bit
# comparison were for nothing. A choice of path, not of figures: both give the same
SAMPLE = 2048


def _errors(y: np.ndarray, v: np.ndarray, unit: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(|y - v|, that in ulps): NaN in the first where y is NaN, inf in the second (a NaN
    result where the exact value is a number)."""
    d = y.astype(np.float64)  # then in place: a mixed float32-float64 ufunc casts through
    np.subtract(d, v, out=d)  # buffers
    np.abs(d, out=d)
    with np.errstate(invalid="ignore"):
        err = np.divide(d, unit)
    err[np.isnan(err)] = np.inf
    return d, err


def _score(y: np.ndarray, v: np.ndarray, unit: np.ndarray) -> Score:
    """The comparison of outputs y with the reference: one compiled pass that writes nothing,
    or NumPy's passes over the errors."""
    if (compiled := loops.kernels()) is not None:
        return Score(*compiled.score(y, v, unit))
    d, err = _errors(y, v, unit)
    total = float(err.sum())
    infinite = 0
    if not np.isfinite(total):
        finite = np.isfinite(err)
        infinite, total = int(err.size - np.count_nonzero(finite)), float(err[finite].sum())
    worst, largest = int(np.argmax(err)), int(np.argmax(d))  # argmax: the first NaN
    return Score(total, infinite, int(np.count_nonzero(err > 0.5)),
                 *(int(np.count_nonzero(err >= k)) for k in (1.0, 2.0, 4.0)),
                 float(err[worst]), worst, float(d[largest]), largest)


def _histogram(y: np.ndarray, v: np.ndarray, unit: np.ndarray, score: Score) -> np.ndarray:
    """The histogram of the errors: bins 0 to 3 ([0, 1/2], (1/2, 1), [1, 2), [2, 4)) from
    the score's counts; only errors of 4 ulps and more are binned one by one, measured
    again (a good implementation has none)."""
    counts = np.zeros(BINS, dtype=np.int64)
    if score.at_least_four:
        if (compiled := loops.kernels()) is not None:
            compiled.histogram_above_four(y, v, unit, counts)
        else:
            err = _errors(y, v, unit)[1]
            counts += histogram(np.compress(err >= 4.0, err))
    counts[:4] = (len(y) - score.above_half, score.above_half - score.at_least_one,
                  score.at_least_one - score.at_least_two,
                  score.at_least_two - score.at_least_four)
    return counts


def dense_figures(y: np.ndarray, v: np.ndarray, unit: np.ndarray, first: int,
                  regions: list) -> dict:
    """The statistics of y measured on every input in float64 (``first``: the first
    input's encoding)."""
    by_region, counts, largest = {}, 0, []
    # the regions partition the chunk: the overall figures are merged from theirs
    for name, s in regions:
        score = _score(y[s], v[s], unit[s])
        by_region[name] = _stats(score, first + s.start, s.stop - s.start)
        counts = counts + _histogram(y[s], v[s], unit[s], score)
        largest.append((score.max_abs, s.start + score.largest))
    stats = dict(functools.reduce(combine, by_region.values()))  # a copy: one region too
    max_abs, j = _largest(largest)
    stats.update({"max_abs": max_abs, "max_abs_bits": first + j,
                  "histogram": counts.tolist(), "regions": by_region})
    return stats


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

    def __init__(self, v: np.ndarray, unit: np.ndarray, first: int, regions: list):
        self.v, self.unit, self.start, self.regions = v, unit, first, regions
        self.sample = v[:SAMPLE].astype(np.float32).view(np.uint32)
        self.rounded = None  # rounded once an output is close enough to need it
        self.by_region = None  # what the rounded results score: once an output needs it

    def _score_rounded(self) -> None:
        """The figures of the correctly rounded results - a comparison pass of its own, made
        only for a block where some implementation returns mostly those (torch's GELU, in
        its far left, returns others and is measured in float64 at once)."""
        self.by_region, largest = {}, []
        for name, s in self.regions:
            score = _score(self.rounded[s], self.v[s], self.unit[s])
            self.by_region[name] = _stats(score, self.start + s.start, s.stop - s.start)
            largest.append((score.max_abs, s.start + score.largest))
        self.max_abs, self.j = _largest(largest)
        # the index of each region's (first) largest error, read off its encoding
        self.worst_at = {name: r["worst_bits"] - self.start
                         for name, r in self.by_region.items()}

    def score(self, y: np.ndarray) -> dict:
        if np.count_nonzero(y[:SAMPLE].view(np.uint32) != self.sample) > len(self.sample) // DENSE:
            return dense_figures(y, self.v, self.unit, self.start, self.regions)
        if self.rounded is None:
            self.rounded = self.v.astype(np.float32)
        differs = y.view(np.uint32) != self.rounded.view(np.uint32)
        if np.count_nonzero(differs) > len(y) // DENSE:  # many: whole-array arithmetic wins
            return dense_figures(y, self.v, self.unit, self.start, self.regions)
        if self.by_region is None:
            self._score_rounded()
        other = np.flatnonzero(differs)  # ascending
        diff, e = _errors(y[other], self.v[other], self.unit[other])
        by_region = {}
        for name, s in self.regions:
            lo, hi = np.searchsorted(other, [s.start, s.stop])
            by_region[name] = self._region(name, other[lo:hi], e[lo:hi])
        stats = dict(functools.reduce(combine, by_region.values()))  # a copy: one region too
        wrong = e[e > 0.5]
        counts = histogram(wrong)
        counts[0] = len(y) - len(wrong)
        largest = [(self.max_abs, self.j)]
        if diff.size:
            k = int(np.argmax(diff))  # the first NaN, else the first largest
            largest.append((float(diff[k]), int(other[k])))
        max_abs, j = _largest(largest)
        stats.update({"max_abs": max_abs, "max_abs_bits": self.start + j,
                      "histogram": counts.tolist(), "regions": by_region})
        return stats

    def _region(self, name: str, at: np.ndarray, e: np.ndarray) -> dict:
        """_stats of the region with the outputs at ``at`` scoring ``e`` instead."""
        base = self.by_region[name]
        finite = np.isfinite(e)
        replaced = _errors(self.rounded[at], self.v[at], self.unit[at])[1]
        out = dict(base)
        out["sum_ulp"] = base["sum_ulp"] - float(replaced.sum()) + float(e[finite].sum())
        out["n_finite"] = base["n_finite"] - int(np.count_nonzero(~finite))
        out["not_correctly_rounded"] = (base["not_correctly_rounded"]
                                        - int(np.count_nonzero(replaced > 0.5))
                                        + int(np.count_nonzero(e > 0.5)))
        if e.size:
            k = int(np.argmax(e))
            if e[k] > base["max_ulp"] or (e[k] == base["max_ulp"]
                                          and at[k] < self.worst_at[name]):
                out["max_ulp"], out["worst_bits"] = float(e[k]), self.start + int(at[k])
        return out


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



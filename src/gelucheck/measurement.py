"""The whole measurement of implementations × dtypes: accuracy (with the minimum and the
special inputs) and tanh drift, as typed results."""
from __future__ import annotations

import contextlib
import itertools
import sys
from collections.abc import Callable, Iterable, Iterator

from . import signatures
from .backends import Implementation
from .checks import accuracy, drift, fingerprint, minimum, profile, sign, specials
from .checks.case import Case
from .formats import Format
from .progress import bar as progress_bar
from .results import AccuracyResult, DriftResult


def evaluate(impl: Implementation, fmt: Format, keep_errors: bool = False) -> AccuracyResult:
    """The accuracy result of one implementation in one dtype, minimum and specials included."""
    case = Case.load(impl, fmt)  # the table loaded and the implementation called once
    result = accuracy.measure_case(case, keep_errors)
    if result.failure is None:
        result.minimum = minimum.check(impl, fmt)
        result.specials = specials.check(impl, fmt)
        result.sign = sign.check(impl, fmt, case)
        result.fingerprint = fingerprint.check(case)
        result.profile = profile.of_case(case)
        result.diagnosis = signatures.of_result(case, result)
    return result


def cases(impls: list[Implementation], dtypes: list[Format]) -> list[tuple[Implementation,
                                                                             Format]]:
    return [(i, d) for i in impls for d in dtypes if d in i.dtypes]


def warm_up(todo: list[tuple[Implementation, Format]], progress: bool = True) -> dict:
    """Compile what compiles (implementations with ``warm_up``) before any measuring: seconds
    per backend. A warm-up that fails is left for the measurement to report."""
    import time

    spent: dict[str, float] = {}
    compiling = [(i.backend, i.warm_up, f) for i, f in todo if i.warm_up is not None]
    bar = progress_bar(len(compiling), "compiling", progress and bool(compiling), unit="case")
    for backend, compile_for, fmt in compiling:
        start = time.perf_counter()
        # a failed compile: the measurement runs it again and reports it
        with contextlib.suppress(Exception):
            compile_for(fmt)
        spent[backend] = spent.get(backend, 0.0) + time.perf_counter() - start
        bar.update()
    bar.close()
    return spent


def run(impls: list[Implementation], dtypes: list[Format], with_drift: bool = True,
        progress: bool = True, keep_errors: bool = False,
        timings: dict | None = None) -> list[AccuracyResult | DriftResult]:
    """Every case's results; ``timings``, when given, gets "compile" (seconds per backend,
    spent before measuring) and "measure" (seconds)."""
    groups = by_backend(impls)
    return run_groups(groups, dtypes, with_drift, progress, keep_errors, timings,
                      count=len(groups))


def by_backend(impls: list[Implementation]) -> list[list[Implementation]]:
    """The implementations in run_groups' groups: each backend's in a row, in their order."""
    return [list(g) for _, g in itertools.groupby(impls, key=lambda i: i.backend)]


def run_groups(groups: Iterable[str | list[Implementation]], dtypes: list[Format],
               with_drift: bool = True, progress: bool = True, keep_errors: bool = False,
               timings: dict | None = None,
               on_group: Callable[[list[AccuracyResult]], None] | None = None,
               count: int | None = None, reference_drift: bool = True,
               beside=None) -> list[AccuracyResult | DriftResult]:
    """``run`` over groups of implementations (one backend each) that may be loaded while
    they are taken (options.selected_by_backend, which names each backend before loading
    it: a ``str`` among the groups): each group compiled, then measured, then
    handed to ``on_group`` - the first results are known before the last group is loaded.
    The drift of every tanh form comes last, over every group's implementations, after the
    drift of the mathematical forms unless ``reference_drift`` is false. ``count``: how many
    groups there will be, where known (for the progress bar). ``beside``: the backends a
    process of their own measures meanwhile (commands/beside.py), their results merged in."""
    import time

    compiled: dict[str, float] = {}
    measuring = 0.0
    bar = progress_bar(count or 0, "measuring", progress, unit="backend")
    results: list[AccuracyResult | DriftResult] = []
    impls: list[Implementation] = []
    minima = {}
    for group in _announced(groups, bar):
        todo = cases(group, dtypes)
        for backend, spent in warm_up(todo, progress).items():
            compiled[backend] = compiled.get(backend, 0.0) + spent
        start = time.perf_counter()
        done = []
        for impl, fmt in todo:
            bar.set_postfix_str(f"{impl.id} {impl.function.name} {fmt.name}", refresh=True)
            result = evaluate(impl, fmt, keep_errors)
            done.append(result)
            if result.minimum is not None:
                minima[(impl.id, impl.function.name, fmt)] = result.minimum
        measuring += time.perf_counter() - start
        results += done
        impls += group
        if on_group is not None:
            with bar.external_write_mode(file=sys.stderr):
                on_group(done)
        if beside is not None:
            beside.poll(bar, on_group)
    if beside is not None:
        beside.wait(bar, on_group)
    if with_drift:
        start = time.perf_counter()
        bar.set_postfix_str("the tanh forms' drift", refresh=True)
        pairs = drift.pairs(impls)
        for fmt in dtypes:
            if reference_drift:
                results.append(drift.reference_drift(fmt))
            for exact, tanh in pairs:
                if fmt in tanh.dtypes and (exact is None or fmt in exact.dtypes):
                    results.append(drift.backend_drift(exact, tanh, fmt, minima))
        measuring += time.perf_counter() - start
    bar.close()
    if timings is not None:
        timings.update(compile=compiled, measure=measuring)
    return results if beside is None else beside.merged(results, timings or {})


def _announced(groups: Iterable[str | list[Implementation]], bar
               ) -> Iterator[list[Implementation]]:
    """The groups, the bar saying which backend is being loaded where the iterable says so
    (a name before its group), and any note a loading prints written clear of the bar. The
    bar counts backends: a named one once its group is measured, or once the next is named
    where it has none (unavailable, or nothing selected); a group named by none on its own."""
    it = iter(groups)
    named = False  # a backend was named and is not counted yet
    while True:
        with bar.external_write_mode(file=sys.stderr):
            item = next(it, None)
        if named and (item is None or isinstance(item, str)):
            bar.update()
            named = False
        if item is None:
            return
        if isinstance(item, str):
            bar.set_postfix_str(f"loading {item}", refresh=True)
            named = True
            continue
        if item:
            yield item
        bar.update()
        named = False

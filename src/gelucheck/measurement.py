"""The whole measurement of implementations × dtypes: accuracy (with the minimum and the
special inputs) and tanh drift, as typed results."""
from __future__ import annotations

import contextlib

from . import signatures
from .backends import Implementation
from .checks import accuracy, drift, fingerprint, minimum, sign, specials
from .checks.case import Case
from .checks.profile import profile
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
        result.profile = profile(case.x, case.errors)
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
    import time

    todo = cases(impls, dtypes)
    compiled = warm_up(todo, progress)
    start = time.perf_counter()
    pairs = drift.pairs(impls) if with_drift else []
    bar = progress_bar(len(todo) + len(pairs) * len(dtypes), "measuring", progress,
                       unit="case")
    results: list[AccuracyResult | DriftResult] = []
    minima = {}
    for impl, fmt in todo:
        result = evaluate(impl, fmt, keep_errors)
        results.append(result)
        if result.minimum is not None:
            minima[(impl.id, impl.function.name, fmt)] = result.minimum
        bar.update()
    if with_drift:
        for fmt in dtypes:
            results.append(drift.reference_drift(fmt))
            for exact, tanh in pairs:
                if fmt in tanh.dtypes and (exact is None or fmt in exact.dtypes):
                    results.append(drift.backend_drift(exact, tanh, fmt, minima))
                bar.update()
    bar.close()
    if timings is not None:
        timings.update(compile=compiled, measure=time.perf_counter() - start)
    return results

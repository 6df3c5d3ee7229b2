"""``gelucheck check`` and ``gelucheck report``: the accuracy matrix of what is named (check)
or of every backend (report), its tables and files, gates and budgets."""
from __future__ import annotations

import os
import sys

from ..formats import FORMATS
from . import beside, options


def add(sub) -> None:
    from ..backends import backend_names

    check = sub.add_parser("check", help="measure backends or your own implementations, side "
                           "by side in one table")
    options.add_selection(check, backend=False)
    check.add_argument("--backend", action="append", metavar="NAME[:IMPL]",
                       type=options.backend_spec,
                       help=f"a backend to measure: {', '.join(backend_names())}, or one "
                       "implementation of it, e.g. torch:F.gelu (repeatable); an unavailable "
                       "one is an error")
    options.add_impl(check)
    check.add_argument("--max-ulp", action="append", default=[], metavar="[REGION=]N",
                       type=options.gate,
                       help="exit 1 if the max ulp error exceeds N, overall or in a region "
                       "(repeatable; e.g. 0.5, 'x<-5=1e3'); N <= 0.5 also fails results that "
                       "are not correctly rounded")
    check.add_argument("--specials", action="store_true",
                       help="with --max-ulp: also exit 1 when a special input (±0, ±inf, NaN, "
                       "±max, ±min subnormal) misses its limit")
    options.add_isolation(check)
    options.add_levels(check)
    options.add_details(check)
    check.set_defaults(handler=run_check)
    report = sub.add_parser("report", help="the whole accuracy matrix of every available "
                            "backend (and your --impl beside them)")
    options.add_selection(report)
    options.add_impl(report)
    options.add_isolation(report)
    options.add_levels(report)
    options.add_details(report)
    report.add_argument("--plots", metavar="DIR", help="write PNG plots of ulp error against x")
    report.add_argument("--html", metavar="FILE", help="write one self-contained HTML page")
    report.add_argument("--all", action="store_true",
                        help="also the implementations that compile before they are measured "
                        "(torch.compile's), which the report leaves out unless named")
    report.add_argument("--consistency", action="store_true",
                        help="also evaluate every call path (as `gelucheck consistency`) and "
                        "report each implementation's worst case over every path")
    report.set_defaults(handler=run_report)


def _measure(args, with_drift: bool) -> int:
    from .. import budgets as budgets_mod
    from .. import judge, measurement, output_files
    from ..limits import refuse_region_twice
    from ..report import summary, tables
    from ..results import AccuracyResult

    # before --cpu-capability's processes start (report has no --max-ulp)
    refuse_region_twice(getattr(args, "max_ulp", []))
    if args.cpu_capability:
        if args.budgets:
            budgets_mod.load(args.budgets)  # a missing or damaged file: said before the work
        return _levels(args, sys.argv[1:] if args.argv is None else args.argv)

    json_path = output_files.file(args.json, "--json")
    markdown_path = output_files.file(args.markdown, "--markdown")
    html_path = output_files.file(getattr(args, "html", None), "--html")
    plots = output_files.folder(getattr(args, "plots", None), "--plots")
    output_files.distinct(("--json", json_path), ("--markdown", markdown_path),
                          ("--html", html_path), ("--plots", plots))
    budgets = budgets_mod.load(args.budgets) if args.budgets else None
    against = budgets if budgets is not None else budgets_mod.load()  # gelucheck's own
    dtypes = args.dtype or list(FORMATS.values())
    timings: dict = {}
    impls: list = []
    keep_errors = bool(plots or args.keep_outputs)
    apart = beside.names(args)
    results: list = measurement.run_groups(
        _groups(args, impls, apart), dtypes, with_drift=with_drift,
        progress=not args.no_progress, keep_errors=keep_errors, timings=timings,
        on_group=_first_results(against, not args.no_progress), count=_count(args),
        beside=beside.Beside(args, apart, dtypes, keep_errors) if apart else None)
    if getattr(args, "consistency", False):
        from ..checks import consistency

        results += consistency.run(impls, dtypes, os.cpu_count() or 1,
                                   progress=not args.no_progress)
    if args.keep_outputs:
        from ..levels import save_outputs

        save_outputs(results, args.keep_outputs)
    _print_own_frames(results)
    env = options.show(results, json_path, markdown_path, against, args.details)
    failed = [r for r in results if r.failure]
    for r, failure in ((r, r.failure) for r in failed if r.failure):
        print(f"ERROR {r.label}: {failure.reason}")
    for r in results:
        if isinstance(r, AccuracyResult) and r.all_nan:
            print(f"ALL NaN {r.identity.id} {r.identity.dtype}")
        if isinstance(r, AccuracyResult) and r.fingerprint and r.fingerprint.mismatch:
            print(f"FINGERPRINT MISMATCH {r.label}: declared {r.fingerprint.declared}, its "
                  f"outputs compute {r.fingerprint.formula} (margin {r.fingerprint.margin:.2f})")
    _print_timings(timings)
    if plots:
        _plots(results, plots)
    if html_path:
        from ..report import html

        html_path.write_text(html.render([("report", results, env)], budgets=against))
        print(f"HTML report written to {html_path}")
    status = 0
    if budgets is not None:
        options.warn_stale(budgets, args.budgets, impls)
    for r in results:
        if budgets is not None and isinstance(r, AccuracyResult):
            verdict = judge.judge(r, budgets)
            if verdict.failed or verdict.better:
                print(f"BUDGET {budgets_mod.key(r)}: {verdict.message()}")
            status |= verdict.failed
    missing = {judge.missing_tier(r.identity, against) for r in results
               if isinstance(r, AccuracyResult)}
    for what, how, _ in sorted(m for m in missing if m is not None):
        print(tables.wrapped(f"{what}: {how}"))
    counts = summary.counts(results, against)
    status |= _gates(args, results)
    print(tables.wrapped(tables.verdict_line(counts) + (
        "" if budgets is not None else " (gelucheck's own budgets; --budgets FILE gates)")))
    return 2 if failed else status


def _groups(args, taken: list, apart: list[str]):
    """What is measured, one backend at a time (options.selected_by_backend) where report
    measures every backend - less those measured ``apart``, in a process of their own
    (beside.py) - else as one selection; each implementation also put in ``taken``, for what
    follows the measurement."""
    from ..backends import backend_names
    from ..measurement import by_backend

    if options.streams(args):
        here = [name for name in backend_names() if name not in apart] if apart else None
        for item in options.selected_by_backend(args, here):
            if not isinstance(item, str):
                taken += item
            yield item
        return
    taken += options.selected(args)
    yield from by_backend(taken)


def _count(args) -> int | None:
    """How many backends report will take in turn (its progress bar's length)."""
    from ..backends import backend_names

    return len(backend_names()) + bool(getattr(args, "impl", None)) if options.streams(args) \
        else None


def _first_results(budgets, progress: bool):
    """On a terminal, each backend's summary rows as soon as it is measured (the whole
    report follows at the end): the fast backends' figures are on screen while the slow
    ones load."""
    from ..report import summary

    if not (progress and sys.stderr.isatty()):
        return None
    started: list[bool] = []

    def show(done: list) -> None:
        if not started:
            started.append(True)
            print("first results, backend by backend (the report follows):", file=sys.stderr)
        for line in summary.lines(done, budgets):
            print(f"  {line}", file=sys.stderr)

    return show


def _levels(args, argv: list[str]) -> int:
    """check/report at several CPU dispatch levels, each in its own process."""
    from .. import levels, output_files

    json_path = output_files.file(args.json, "--json")
    markdown_path = output_files.file(args.markdown, "--markdown")
    output_files.distinct(("--json", json_path), ("--markdown", markdown_path))
    wanted = levels.check_levels([v.strip() for v in args.cpu_capability.split(",")])
    rest, skip = [], False
    for a in argv:  # the same command, less what the parent does itself
        if skip:
            skip = False
            continue
        if a in ("--cpu-capability", "--json", "--markdown", "--html", "--plots"):
            skip = True
            continue
        if not a.startswith(("--cpu-capability=", "--json=", "--markdown=")):
            rest.append(a)
    from ..results import ConsistencyResult

    results = levels.measure(rest, wanted)
    options.show(results, json_path, markdown_path)
    for r in results:
        if r.failure:
            print(f"ERROR {r.label}: {r.failure.reason}")
    status = 2 if any(r.failure for r in results) else 0
    return max(status, options.judge_consistency(
        args, [r for r in results if isinstance(r, ConsistencyResult)]))


def _print_timings(timings: dict) -> None:
    """Compiling apart from measuring: a cold torch.compile cache costs seconds per graph."""
    compiled = timings.get("compile") or {}
    parts = [f"{b} compiled in {s:.1f} s" for b, s in compiled.items()]
    print(f"time: {'; '.join(parts) + '; ' if parts else ''}measured in "
          f"{timings.get('measure', 0.0):.1f} s", file=sys.stderr)


def _print_own_frames(results) -> None:
    """Where an implementation's own code raised: its frames once per implementation, before
    the tables (each of which says ERROR for it)."""
    shown = set()
    for r in results:
        failure, identity = r.failure, getattr(r, "identity", None)
        if failure and failure.traceback and identity and identity.id not in shown:
            shown.add(identity.id)
            print(f"{identity.id} raised (first in {identity.function} {identity.dtype}):\n"
                  f"{failure.traceback}")


def _gates(args, results) -> int:
    from ..limits import breaches
    from ..results import AccuracyResult

    limits = getattr(args, "max_ulp", [])
    if not limits:
        return 0
    broken = 0
    for r in results:
        if isinstance(r, AccuracyResult):
            for breach in breaches(r, limits, args.specials):
                print(f"FAIL {r.label}: {breach}")
                broken = 1
    if not broken:
        print("every result within --max-ulp" + (" and every special input at its limit"
                                                  if args.specials else ""))
    return broken


def _plots(results, directory) -> None:
    from pathlib import Path

    from ..report import plots
    from ..results import AccuracyResult

    if not plots.available():
        print("plots skipped: matplotlib is not installed (pip install 'gelucheck[plots]')")
        return
    written = [plots.plot(r, Path(directory)) for r in results if isinstance(r, AccuracyResult)]
    print(f"{sum(p is not None for p in written)} plots written to {directory}")


def run_check(args) -> int:
    return _measure(args, with_drift=False)


def run_report(args) -> int:
    return _measure(args, with_drift=True)

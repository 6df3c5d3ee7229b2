"""gelucheck: how accurate is each GELU and Gaussian CDF, in ulps, per backend and dtype."""
from __future__ import annotations

import argparse
import os
import sys

from .errors import GelucheckError, UsageError, choose
from .formats import FORMATS
from .functions import FUNCTIONS


def _choices(kind: str, valid):
    """An argparse type: the object a name stands for (the name itself for a plain list),
    resolved here once; an unknown name is a usage error that lists the valid ones."""
    def parse(value: str):
        try:
            return choose(kind, value, valid)
        except UsageError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    parse.__name__ = kind
    return parse


def _backend_spec(text: str) -> str:
    """--backend NAME or NAME:IMPL, the backend's name checked at once (the implementation's
    when the backend loads)."""
    from .backends import backend_names

    _choices("backend", backend_names())(text.partition(":")[0])
    return text


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: need a whole number of at least 1")
    return value


def _add_reference(sub) -> None:
    ref = sub.add_parser("reference", help="build or verify the stored reference data")
    refsub = ref.add_subparsers(dest="action", required=True)
    build = refsub.add_parser("build", help="regenerate reference/ with mpmath")
    build.add_argument("--dtype", action="append", type=_choices("dtype", FORMATS),
                       help="a format to rebuild (repeatable; default: all)")
    build.add_argument("--workers", type=_positive, default=None,
                       help="processes (default: cores)")
    build.add_argument("--directory", default=None, help="where the data lives")
    verify = refsub.add_parser("verify", help="check reference/ against its manifest, mpmath "
                               "and Arb")
    verify.add_argument("--full", action="store_true", help="re-derive every stored value")
    verify.add_argument("--dtype", action="append", type=_choices("dtype", FORMATS),
                        help="a format to verify (repeatable; default: all)")
    verify.add_argument("--workers", type=_positive, default=2,
                        help="processes for the re-derivation (default: 2)")
    verify.add_argument("--directory", default=None,
                        help="the data to verify (default: the data in use)")
    verify.add_argument("--no-arb", action="store_true", help="skip the Arb cross-check")


def _reference(args) -> int:
    from .reference import arbref
    from .reference.build import build
    from .reference.verify import verify

    if args.action == "build":
        build(args.dtype, args.workers, args.directory)
        return 0
    report = verify(args.dtype, args.full, args.directory, args.workers, arb=not args.no_arb)
    for fmt, n in report.checked.items():
        line = f"{fmt}: {n} inputs × {len(FUNCTIONS)} functions re-derived with mpmath"
        if fmt in report.arb_certified:
            unc = report.arb_uncertified[fmt]
            line += (f"; Arb proved {report.arb_certified[fmt]} correctly rounded, "
                     f"{len(unc)} not decided" + (f" (first: {', '.join(unc[:3])})" if unc else ""))
        print(line)
    if not arbref.available() and not args.no_arb:
        print("Arb cross-check skipped: python-flint is not installed (pip install python-flint)")
    for problem in report.problems:
        print(f"ERROR {problem}")
    for mismatch in report.mismatches[:20]:
        print(f"MISMATCH {mismatch}")
    print("reference data OK" if report.ok else "reference data FAILED verification")
    return 0 if report.ok else 1


def _add_selection(p, backend: bool = True) -> None:
    from .backends import backend_names

    if backend:
        p.add_argument("--backend", action="append", metavar="NAME[:IMPL]",
                       type=_backend_spec,
                       help=f"a backend: {', '.join(backend_names())}, or one implementation "
                       "of it, e.g. torch:F.gelu (repeatable; default: every available one)")
    p.add_argument("--function", action="append", type=_choices("function", FUNCTIONS),
                   help=f"a function: {', '.join(FUNCTIONS)} (repeatable; default: all of the "
                   "backends'; with --impl, required: what your callable computes)")
    p.add_argument("--dtype", action="append", type=_choices("dtype", FORMATS),
                   help=f"a dtype: {', '.join(FORMATS)} (repeatable; default: all)")
    p.add_argument("--json", metavar="FILE", help="write the results as JSON")
    p.add_argument("--markdown", metavar="FILE", help="write the tables as Markdown")
    p.add_argument("--budgets", metavar="FILE", help="judge the results against a budgets "
                   "file (exit 1 if any is worse)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def _add_impl(p) -> None:
    """--impl (repeatable) and how a user's callable is called."""
    p.add_argument("--impl", action="append", default=[], metavar="MOD:FN",
                   help="your callable, e.g. mypkg.act:gelu (repeatable; imported from the "
                   "current folder too); --function says what it computes")
    _add_user_options(p)


def _add_user_options(p) -> None:
    """How a user's --impl callable is called."""
    from .backends.registry import DEVICES, FRAMEWORKS

    p.add_argument("--framework", default="numpy", type=_choices("framework", FRAMEWORKS),
                   help="what your callable takes and returns: numpy or torch (default: numpy)")
    p.add_argument("--device", default="cpu", type=_choices("device", DEVICES),
                   help="where its tensors live: cpu or cuda (cuda needs --framework torch)")
    p.add_argument("--autograd", action="store_true",
                   help="your callable is the forward function: measure its derivative by "
                   "torch autograd (--framework torch, --function gelu_grad and the like)")


def _add_measure(sub) -> None:
    from .backends import backend_names

    listing = sub.add_parser("list", help="every backend and implementation, available or "
                             "not, and why")
    listing.add_argument("--fingerprint", action="store_true",
                         help="also which GELU form each implementation computes, per dtype, "
                         "read off its outputs (runs each on the stored inputs)")
    check = sub.add_parser("check", help="measure backends or your own implementations, side "
                           "by side in one table")
    _add_selection(check, backend=False)
    check.add_argument("--backend", action="append", metavar="NAME[:IMPL]",
                       type=_backend_spec,
                       help=f"a backend to measure: {', '.join(backend_names())}, or one "
                       "implementation of it, e.g. torch:F.gelu (repeatable); an unavailable "
                       "one is an error")
    _add_impl(check)
    check.add_argument("--max-ulp", action="append", default=[], metavar="[REGION=]N",
                       type=_gate,
                       help="exit 1 if the max ulp error exceeds N, overall or in a region "
                       "(repeatable; e.g. 0.5, 'x<-5=1e3'); N <= 0.5 also fails results that "
                       "are not correctly rounded")
    check.add_argument("--specials", action="store_true",
                       help="with --max-ulp: also exit 1 when a special input (±0, ±inf, NaN, "
                       "±max, ±min subnormal) misses its limit")
    _add_isolation(check)
    _add_levels(check)
    report = sub.add_parser("report", help="the whole accuracy matrix of every available "
                            "backend (and your --impl beside them)")
    _add_selection(report)
    _add_impl(report)
    _add_isolation(report)
    _add_levels(report)
    report.add_argument("--plots", metavar="DIR", help="write PNG plots of ulp error against x")
    report.add_argument("--html", metavar="FILE", help="write one self-contained HTML page")
    report.add_argument("--consistency", action="store_true",
                        help="also evaluate every call path (as `gelucheck consistency`) and "
                        "report each implementation's worst case over every path")
    page = sub.add_parser("html", help="render saved JSON reports as one self-contained HTML "
                          "page (several side by side, with what changed between them)")
    page.add_argument("reports", nargs="*", metavar="REPORT.json", help="saved reports")
    page.add_argument("--study", metavar="STUDY.json", action="append", default=[],
                      help="also a saved study (`gelucheck study moons --json`)")
    page.add_argument("-o", "--output", required=True, metavar="FILE", help="the page")
    consistency = sub.add_parser(
        "consistency", help="same input, same output: every implementation along other call "
        "paths (alone, short arrays, strided and transposed views, module/out=/compiled "
        "calls, one thread) against its bulk result")
    _add_selection(consistency)
    _add_impl(consistency)
    consistency.add_argument("--workers", type=_positive, default=os.cpu_count() or 1,
                             help="processes (default: the number of cores)")
    consistency.add_argument("--write-budgets", metavar="FILE",
                             help="record each measured path's count of differing outputs in "
                             "this budgets file (its entries for those cases must exist)")
    pair = sub.add_parser(
        "drift", help="two implementations against each other, e.g. torch's F.gelu and ONNX "
        "Runtime's Gelu: how many outputs differ, by how much, and where each puts the minimum")
    for which in ("first", "second"):
        pair.add_argument(which, metavar=which.upper(), help="backend:name[@function], e.g. "
                          "torch:F.gelu@gelu or onnxruntime:Gelu@gelu_tanh (the function may be "
                          "left out where the name has one, or gelu among several), or your "
                          "callable as user:MOD:FN@function")
    pair.add_argument("--dtype", action="append", type=_choices("dtype", FORMATS),
                      help=f"a dtype: {', '.join(FORMATS)} (repeatable; default: every dtype "
                      "both take)")
    pair.add_argument("--json", metavar="FILE", help="write the results as JSON")
    pair.add_argument("--markdown", metavar="FILE", help="write the table as Markdown")
    _add_user_options(pair)
    bench = sub.add_parser("bench", help="benchmark runs (pytest-benchmark JSON)")
    bench_sub = bench.add_subparsers(dest="action", required=True)
    bench_compare = bench_sub.add_parser(
        "compare", help="each benchmark's time relative to the copy baseline of the same run, "
        "old against new, judged against a noise band from both runs' spread; exit 1 when "
        "one is slower beyond its band")
    bench_compare.add_argument("old", help="the earlier run: a JSON file, or a folder (its "
                               "newest run, e.g. .benchmarks)")
    bench_compare.add_argument("new", nargs="+", help="the later run: a JSON file or a folder; "
                               "several: a verdict must hold in every one (a rerun confirms "
                               "it)")
    bench_compare.add_argument("--floor", type=float, default=None,
                               help="the narrowest band, as a fraction (default 0.10)")
    bench_compare.add_argument("--markdown", metavar="FILE", help="write the table as Markdown")
    compare = sub.add_parser("compare", help="what got worse or better between two JSON reports")
    compare.add_argument("old", help="the earlier JSON report")
    compare.add_argument("new", help="the later JSON report")
    compare.add_argument("--fail-on-regression", action="store_true",
                         help="exit 1 when anything got worse, or a result of the old report "
                         "has no counterpart in the new one")
    compare.add_argument("--allow-missing", action="store_true",
                         help="with --fail-on-regression: a result missing from the new report "
                         "is no failure")
    sweep = sub.add_parser("sweep", help="every float32 input (or a --range of encodings) of "
                           "one or more implementations, against one reference pass")
    sweep.add_argument("--backend", action="append", default=[], metavar="NAME[:IMPL]",
                       help="a backend, or one implementation of it (repeatable)")
    sweep.add_argument("--impl", action="append", default=[], metavar="MOD:FN",
                       help="your callable (repeatable)")
    _add_user_options(sweep)
    sweep.add_argument("--function", required=True, type=_choices("function", FUNCTIONS),
                       help=f"the function to sweep: {', '.join(FUNCTIONS)}")
    sweep.add_argument("--dtype", default=FORMATS["float32"], type=_choices("dtype", FORMATS),
                       help="float32 (the only one to sweep)")
    sweep.add_argument("--range", metavar="START:STOP", help="hex encodings, STOP excluded "
                       "(default: all 2^32)")
    sweep.add_argument("--workers", type=_positive, default=os.cpu_count() or 1,
                       help="processes (default: the number of cores)")
    sweep.add_argument("--json", metavar="FILE", help="write the results as JSON")
    sweep.add_argument("--checkpoint", metavar="DIR", help="save each finished task here and "
                       "resume from it")
    sweep.add_argument("--no-progress", action="store_true", help="no progress bar")
    sweep.add_argument("--profile", action="store_true",
                       help="print where the time went, per 2^24 inputs: each "
                       "implementation's own evaluation, the reference (once for all), the "
                       "comparison; and the sweep's cost over the implementations' own")
    sweep.add_argument("--budgets", metavar="FILE", help="a CI gate: exit 1 when a figure of a "
                       "whole-float32 sweep is worse than the sweep budget recorded there")
    sweep.add_argument("--write-budgets", metavar="FILE", help="record this whole-float32 "
                       "sweep's figures in the budgets file (its float32 entries must exist)")
    budgets = sub.add_parser("budgets", help="measure every available backend and (re)write "
                             "the budgets file, keeping its recorded defects and comments")
    budgets.add_argument("--write", metavar="FILE", required=True,
                         help="the budgets file (gelucheck's own: "
                         "src/gelucheck/data/budgets.toml)")
    budgets.add_argument("--backend", action="append", type=_choices("backend", backend_names()),
                         help="measure only this backend (repeatable; default: every available "
                         "one, or none with --impl); the others keep their entries, e.g. "
                         "torch-cuda measured on a GPU machine")
    budgets.add_argument("--function", action="append", type=_choices("function", FUNCTIONS),
                         help="with --impl: what your callable computes (repeatable)")
    _add_impl(budgets)
    budgets.add_argument("--from-report", metavar="REPORT.json", action="append",
                         help="record the figures of a saved `gelucheck report --json` instead "
                         "of measuring (repeatable); the others keep their entries")


def _add_levels(p) -> None:
    p.add_argument("--cpu-capability", metavar="LEVELS",
                   help="measure at each of these CPU dispatch levels (comma separated: "
                   "default, avx2, avx512 - those this machine runs), each in a process of its "
                   "own, labelled backend@level; outputs that differ between levels are listed")
    p.add_argument("--keep-outputs", metavar="FILE.npz", help=argparse.SUPPRESS)


def _add_isolation(p) -> None:
    p.add_argument("--timeout", type=float, metavar="SECONDS",
                   help="run each implementation in a child process; a call that takes longer "
                   "is its error (so is a crash of the child)")
    p.add_argument("--isolate", action="store_true",
                   help="run each implementation in a child process, so that a crash (a "
                   "signal, an abort, running out of memory) is its error and the run goes on")


def _gate(text: str):
    from .gates import parse_limit

    try:
        return parse_limit(text)
    except UsageError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _list(args) -> int:
    from .backends import backend_names, get_backend

    for name in backend_names():
        b = get_backend(name)
        state = f"available ({b.version})" if b.available else f"unavailable: {b.reason}"
        print(f"{name}: {state}")
        for i in b.implementations:
            how = ", ".join(f"{d.name} {i.how(d)}" if i.how(d) != "native" else d.name
                            for d in i.dtypes)
            print(f"  {i.name:14s} {i.function.name:9s} {i.description}  [{how}]")
            if args.fingerprint:
                _print_fingerprints(i)
        for what, why in b.unavailable.items():
            print(f"  (no {what}: {why})")
    return 0


def _user_options(args):
    from .backends import UserOptions

    return UserOptions(getattr(args, "framework", "numpy"), getattr(args, "device", "cpu"),
                       getattr(args, "isolate", False), getattr(args, "timeout", None),
                       getattr(args, "autograd", False))


def _selected(args) -> list:
    """The implementations --backend and --impl name (backends.implementations); ``report``
    measures every backend beside an --impl, the other commands only what is named."""
    from .backends import implementations

    impls = getattr(args, "impl", None) or []
    if args.command == "check" and not args.backend and not impls:
        raise UsageError("check: name what to measure: --backend NAME[:IMPL] or --impl MOD:FN "
                         "(either repeatable, both together for one table)")
    chosen = implementations(args.backend, impls, args.function, _user_options(args),
                             every_backend=args.command == "report" or not impls)
    for name, function, reason in chosen.not_applicable:
        print(f"note: {name} has no {function}: {reason}", file=sys.stderr)
    if args.function and not chosen.implementations and not chosen.unavailable:
        raise UsageError("nothing to measure: no selected backend computes "
                         f"{', '.join(f.name for f in args.function)}")
    for name, reason in chosen.unavailable:
        if args.command == "check":  # asked for by name: it cannot be measured
            raise UsageError(f"backend {name} is unavailable: {reason}")
        print(f"note: backend {name} is unavailable: {reason}", file=sys.stderr)
    return chosen.implementations


def _levels(args, argv: list[str]) -> int:
    """check/report at several CPU dispatch levels, each in its own process."""
    from . import levels, outputs

    json_path = outputs.file(args.json, "--json")
    markdown_path = outputs.file(args.markdown, "--markdown")
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
    from .results import ConsistencyResult

    results = levels.measure(rest, wanted)
    _show(results, json_path, markdown_path)
    for r in results:
        if r.failure:
            print(f"ERROR {r.label}: {r.failure.reason}")
    status = 2 if any(r.failure for r in results) else 0
    return max(status, _judge_consistency(
        args, [r for r in results if isinstance(r, ConsistencyResult)]))


def _judge_consistency(args, results) -> int:
    """--budgets: each path's differing outputs against the recorded counts (a path not
    recorded - a dispatch level, say - may differ nowhere)."""
    from . import budgets as budgets_mod

    if not args.budgets:
        return 0
    budgets = budgets_mod.load(args.budgets)
    status = 0
    for r in results:
        verdict = budgets_mod.judge_consistency(r, budgets)
        if verdict.missing:
            continue
        if verdict.failed or verdict.better:
            print(f"BUDGET {r.label}: {verdict.message()}")
        status |= verdict.failed
    return int(status)


def _show(results, json_path, markdown_path) -> dict:
    """Print the tables (with the environment) and write the JSON and Markdown asked for;
    returns the environment."""
    from .report import environment, jsonio, tables

    env = environment.describe(results)
    print(tables.render(results, environment=env))
    if json_path:
        jsonio.write(results, json_path)
    if markdown_path:
        markdown_path.write_text(tables.render(results, "markdown", env))
    return env


def _print_fingerprints(impl) -> None:
    """Per dtype, the formula the implementation's outputs compute (checks.fingerprint)."""
    from .checks import data, fingerprint
    from .errors import ImplementationError
    from .report.tables import fingerprint_text

    if not fingerprint.applies(impl):
        return
    for fmt in impl.dtypes:
        try:
            found = fingerprint.check(impl, fmt, impl(data.table(fmt).x))
        except ImplementationError as exc:
            print(f"      {fmt.name:8s} fingerprint: ERROR {exc}")
            continue
        print(f"      {fmt.name:8s} fingerprint: {fingerprint_text(found)}")


def _print_timings(timings: dict) -> None:
    """Compiling apart from measuring: a cold torch.compile cache costs seconds per graph."""
    compiled = timings.get("compile") or {}
    parts = [f"{b} compiled in {s:.1f} s" for b, s in compiled.items()]
    print(f"time: {'; '.join(parts) + '; ' if parts else ''}measured in "
          f"{timings.get('measure', 0.0):.1f} s", file=sys.stderr)


def _measure(args, with_drift: bool) -> int:
    from . import budgets as budgets_mod
    from . import matrix, outputs
    from .results import AccuracyResult

    if args.cpu_capability:
        if args.budgets:
            budgets_mod.load(args.budgets)  # a missing or damaged file: said before the work
        return _levels(args, sys.argv[1:] if args.argv is None else args.argv)

    json_path = outputs.file(args.json, "--json")
    markdown_path = outputs.file(args.markdown, "--markdown")
    html_path = outputs.file(getattr(args, "html", None), "--html")
    plots = outputs.folder(getattr(args, "plots", None), "--plots")
    budgets = budgets_mod.load(args.budgets) if args.budgets else None
    impls = _selected(args)
    dtypes = args.dtype or list(FORMATS.values())
    timings: dict = {}
    results = matrix.run(impls, dtypes, with_drift=with_drift, progress=not args.no_progress,
                         keep_errors=bool(plots or args.keep_outputs), timings=timings)
    if getattr(args, "consistency", False):
        from .checks import consistency

        results += consistency.run(impls, dtypes, os.cpu_count() or 1,
                                   progress=not args.no_progress)
    if args.keep_outputs:
        from .levels import save_outputs

        save_outputs(results, args.keep_outputs)
    _print_own_frames(results)
    env = _show(results, json_path, markdown_path)
    failed = [r for r in results if r.failure]
    for r in failed:
        print(f"ERROR {r.label}: {r.failure.reason}")
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
        from .report import html

        html_path.write_text(html.render([("report", results, env)]))
        print(f"HTML report written to {html_path}")
    status = 0
    if budgets is not None:
        _warn_stale(budgets, args.budgets)
        for r in results:
            if not isinstance(r, AccuracyResult):
                continue
            verdict = budgets_mod.judge(r, budgets)
            if verdict.failed or verdict.better:
                print(f"BUDGET {budgets_mod.key(r)}: {verdict.message()}")
            status |= verdict.failed
    status |= _gates(args, results)
    return 2 if failed else status


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
    from .gates import breaches
    from .results import AccuracyResult

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


def _warn_stale(budgets, path) -> None:
    from . import budgets as budgets_mod
    from .backends import backend_names, select

    for entry in budgets_mod.stale_entries(budgets, select().implementations, backend_names()):
        print(f"warning: {path}: {entry} names no implementation here; misspelt or removed?",
              file=sys.stderr)


def _plots(results, directory) -> None:
    from pathlib import Path

    from .report import plots
    from .results import AccuracyResult

    if not plots.available():
        print("plots skipped: matplotlib is not installed (pip install 'gelucheck[plots]')")
        return
    written = [plots.plot(r, Path(directory)) for r in results if isinstance(r, AccuracyResult)]
    print(f"{sum(p is not None for p in written)} plots written to {directory}")


def _consistency(args) -> int:
    from . import budgets as budgets_mod
    from . import outputs
    from .checks import consistency

    json_path = outputs.file(args.json, "--json")
    markdown_path = outputs.file(args.markdown, "--markdown")
    if args.budgets:
        budgets_mod.load(args.budgets)  # a missing or damaged file: said before the work
    impls = _selected(args)
    dtypes = args.dtype or list(FORMATS.values())
    results = consistency.run(impls, dtypes, args.workers, progress=not args.no_progress)
    _show(results, json_path, markdown_path)
    for r in results:  # where the tables show nothing, say that nothing differed
        if r.failure is None and r.paths and not any(p.n_differ or p.error for p in r.paths):
            print(f"{r.label}: every path gave the same bits: {r.paths[0].n_inputs:,} inputs "
                  f"x {len(r.paths)} paths")
    broken = [(r, p) for r in results for p in r.paths if p.error]
    for r, p in broken:
        print(f"ERROR {r.label} path {p.name}: {p.error}")
    status = 2 if broken or any(r.failure for r in results) else 0
    if args.write_budgets:
        recorded = budgets_mod.load(args.write_budgets)
        for r in results:
            entry = recorded.entries.get(r.identity.key)
            if entry is None:
                print(f"warning: no entry {r.identity.key} in {args.write_budgets}: run "
                      "`gelucheck budgets --write` first", file=sys.stderr)
            elif r.failure is None:
                entry["inconsistent"] = budgets_mod.consistency_entry(r)
        budgets_mod.write(args.write_budgets, recorded)
    return max(status, _judge_consistency(args, results))


def _html(args) -> int:
    from pathlib import Path

    from . import outputs
    from .report import compare, html, jsonio
    from .study import output as study_output

    target = outputs.file(args.output, "--output")
    if not args.reports and not args.study:
        raise UsageError("html: give at least one REPORT.json or --study STUDY.json")
    studies = [study_output.read(p) for p in args.study]
    loaded = [(Path(p).stem, *jsonio.read_report(p)) for p in args.reports]
    names = [n for n, _, _ in loaded]
    if len(set(names)) < len(names):  # two files of the same name: tell them apart
        loaded = [(f"{i + 1}:{n}", r, e) for i, (n, r, e) in enumerate(loaded)]
    diffs = [(f"Compare {a[0]} -> {b[0]}", compare.compare(a[1], b[1]))
             for a, b in zip(loaded, loaded[1:])]
    target.write_text(html.render(loaded, diffs,
                                  extra=[study_output.html_section(s) for s in studies]))
    print(f"{target}: {target.stat().st_size / 1e6:.2f} MB")
    return 0


def _drift(args) -> int:
    from . import outputs
    from .backends import member
    from .checks import drift

    first, second = member(args.first, _user_options(args)), member(args.second,
                                                                   _user_options(args))
    if first.function.family != second.function.family:
        raise UsageError(f"{args.first} computes {first.function.name} and {args.second} "
                         f"{second.function.name}: not comparable")
    json_path = outputs.file(args.json, "--json")
    markdown_path = outputs.file(args.markdown, "--markdown")
    both = [f for f in FORMATS.values() if f in first.dtypes and f in second.dtypes]
    asked = args.dtype or both
    for fmt in asked:
        if fmt not in both:
            print(f"{fmt.name}: skipped - {first.id} takes "
                  f"{', '.join(f.name for f in first.dtypes)}; {second.id} takes "
                  f"{', '.join(f.name for f in second.dtypes)}", file=sys.stderr)
    todo = [f for f in asked if f in both]
    if not todo:
        raise UsageError(f"{args.first} and {args.second} share no dtype of those asked")
    results = [drift.runtime_drift(first, second, fmt) for fmt in todo]
    _show(results, json_path, markdown_path)
    failed = [r for r in results if r.failure]
    for r in failed:
        print(f"ERROR {r.label}: {r.failure.reason}")
    return 2 if failed else 0


def _bench(args) -> int:
    import math

    from . import outputs
    from .report import bench, tables

    floor = bench.FLOOR if args.floor is None else args.floor
    if not 0 <= floor < 10:
        raise UsageError(f"--floor {args.floor}: a fraction such as 0.1 (10%)")
    markdown_path = outputs.file(args.markdown, "--markdown")
    old = bench.load(args.old)
    runs = [bench.compare(old, bench.load(new), floor) for new in args.new]
    rows = bench.confirm([run[0] for run in runs])
    if not rows:
        raise UsageError(f"{args.old} and {' '.join(args.new)} share no benchmark with its copy "
                         "baseline (run the same selection, baselines included)")
    _, only_old, only_new, _ = runs[0]
    header, body = bench.render(rows)
    print(tables.plain(header, body))
    if markdown_path:
        markdown_path.write_text(tables.markdown(header, body) + "\n")
    for title, names in (("only in the old run", only_old), ("only in the new run", only_new)):
        if names:
            print(f"{len(names)} {title}: {', '.join(names[:5])}" + (" ..." if len(names) > 5
                                                                      else ""))
    slower = [r for r in rows if r.verdict == "slower"]
    faster = [r for r in rows if r.verdict == "faster"]
    spreads = [f"{math.expm1(run[3]):.1%}" for run in runs if run[3] is not None]
    print(f"{len(rows)} compared: {len(slower)} slower, {len(faster)} faster beyond their noise "
          "band" + (f" (between-run spread of the changes: {', '.join(spreads)})"
                    if spreads else "") + (f", in every one of {len(runs)} later runs"
                                           if len(runs) > 1 else ""))
    return 1 if slower else 0


def _study(args) -> int:
    from .study import command

    return command.run(args)


def _compare(args) -> int:
    from .report import compare, jsonio

    old, new = jsonio.read(args.old), jsonio.read(args.new)
    diff = compare.compare(old, new)
    print(compare.render(diff))
    if not args.fail_on_regression:
        return 0
    missing = [] if args.allow_missing else diff["only_old"]
    if old and len(diff["only_old"]) == len(old):
        print(f"the reports share no result: nothing of {args.old} was measured in {args.new}")
    for label in missing:
        print(f"MISSING {label}: in {args.old}, not in {args.new} (renamed, removed, or not "
              "measured; --allow-missing accepts that)")
    return 1 if diff["worse"] or missing else 0


def _budgets(args) -> int:
    from pathlib import Path

    from . import budgets as budgets_mod
    from . import matrix
    from .backends import implementations
    from .report import jsonio
    from .results import AccuracyResult

    path = Path(args.write)
    old = budgets_mod.load(path) if path.exists() else budgets_mod.Budgets()
    if args.from_report:
        if args.backend or args.impl:
            raise UsageError("budgets: --backend and --impl measure, --from-report reads: "
                             "give one")
        results = [r for p in args.from_report for r in jsonio.read_report(p)[0]
                   if isinstance(r, AccuracyResult)]
        if not results:
            raise UsageError(f"{', '.join(args.from_report)}: no accuracy results to record")
    else:
        chosen = implementations(args.backend, args.impl, args.function, _user_options(args),
                                 every_backend=not args.impl)
        if args.backend and chosen.unavailable:  # asked for by name: nothing would be written
            name, reason = chosen.unavailable[0]
            raise UsageError(f"backend {name} is unavailable: {reason}")
        results = matrix.run(chosen.implementations, list(FORMATS.values()), with_drift=False)
    new = budgets_mod.Budgets(defects=old.defects)
    new.entries = dict(old.entries)  # backends not installed here keep their budgets
    for r in results:
        if r.failure is None:
            k = budgets_mod.key(r)
            new.entries[k] = budgets_mod.entry_from(r, old.entries.get(k))
    budgets_mod.write(path, new)
    print(f"{len(results)} budgets written to {path}")
    return 0


def _sweep(args) -> int:
    from . import outputs
    from .report import jsonio
    from .sweep.runner import check_dtype, parse_range, sweep

    check_dtype(args.dtype)
    span = parse_range(args.range)
    json_path = outputs.file(args.json, "--json")
    outputs.folder(args.checkpoint, "--checkpoint")
    # named, not resolved: the sweep resolves them (importing the frameworks) while its
    # workers start, and refuses an unknown or unavailable one before any task runs
    specs = [{"kind": "builtin", "impl": b, "function": args.function.name}
             for b in args.backend]
    specs += [{"kind": "user", "impl": spec, "function": args.function.name,
               "framework": args.framework, "device": args.device, "autograd": args.autograd}
              for spec in args.impl]
    if not specs:
        raise UsageError("name what to sweep: --backend NAME[:IMPL] or --impl MOD:FN")
    results = sweep(specs, args.function, span, args.workers, args.checkpoint,
                    progress=not args.no_progress)
    for r in results:
        who = f"{r.identity.id} {r.identity.function} float32"
        if r.failure:
            print(f"ERROR {who}: {r.failure.reason}")
            continue
        f = r.figures
        infinite = (f" over the finite errors ({f.n_infinite:,} infinite)" if f.n_infinite
                    else "")
        print(f"{who} [{r.range[0]}, {r.range[1]}): {f.n_inputs:,} inputs, max "
              f"{f.max_ulp:.4g} ulp at {f.worst_input!r} ({f.worst_input_hex}), mean "
              f"{f.mean_ulp:.4g}{infinite}, correctly rounded "
              f"{r.correctly_rounded_fraction:.4%}, "
              f"{_timing(r.wall_s, r.n_evaluated)}; "
              f"{r.n_slow_reference:,} too close for float64, proven by Arb or mpmath")
    if args.profile:
        _sweep_profile(results)
    if json_path:
        jsonio.write(results, json_path)
    status = 2 if any(r.failure for r in results) else 0
    return max(status, _sweep_budgets(args, results))


def _timing(wall_s: float, computed: int) -> str:
    """The sweep's time and its rate over the inputs computed now, each with its significant
    digits: a range of 16 inputs had read "0.0 s (0.0 M inputs/s ...)"."""
    per_second = computed / wall_s
    rate = f"{per_second / 1e6:.1f} M" if per_second >= 1e6 else f"{per_second:,.0f}"
    seconds = f"{wall_s:.1f}" if wall_s >= 1 else f"{wall_s:.2g}"
    return f"{seconds} s ({rate} inputs/s computed now)"


def _sweep_profile(results) -> None:
    """CPU seconds per 2^24 inputs (summed over workers, this run's tasks only)."""
    measured = [r for r in results if not r.failure and r.n_evaluated]
    if not measured:
        print("profile: nothing was computed in this run (all tasks came from the checkpoint)")
        return
    per = (1 << 24) / measured[0].n_evaluated
    reference = measured[0].reference_s * per
    evals = sum(r.eval_s for r in measured) * per
    checks = sum(r.check_s for r in measured) * per
    guards = sum(r.guard_s for r in measured) * per
    print(f"profile, CPU seconds per 2^24 inputs: reference {reference:.4f} (once for all "
          f"{len(measured)})")
    for r in measured:
        print(f"  {r.identity.id}: implementation {r.eval_s * per:.4f}, comparison "
              f"{r.check_s * per:.4f}, input guard {r.guard_s * per:.4f}")
    parts = reference + evals + checks + guards
    total = max(measured[0].task_s * per, parts)
    print(f"  other (merging blocks, bookkeeping) {total - parts:.4f}")
    print(f"  total {total:.4f} = {total / evals:.2f} x the implementations' own time; "
          f"{total / (reference + evals):.2f} x (one reference + their evaluations)")
    if measured[0].compile_s is not None:
        print(f"  not in these figures: the compiled loops ready in {measured[0].compile_s:.2f} s "
              "before the sweep (numba compiles them once, then loads its disk cache)")


def _sweep_budgets(args, results) -> int:
    """--write-budgets records, --budgets judges (against figures of the same range)."""
    from . import budgets as budgets_mod

    if not (args.budgets or args.write_budgets):
        return 0
    if args.write_budgets:
        recorded = budgets_mod.load(args.write_budgets)
        for r in results:
            entry = recorded.entries.get(r.identity.key)
            if entry is None or r.failure:
                print(f"warning: nothing recorded for {r.label}", file=sys.stderr)
            else:
                entry[budgets_mod.SWEEP_KEY] = budgets_mod.sweep_entry(r)
        budgets_mod.write(args.write_budgets, recorded)
    status = 0
    if args.budgets:
        gate = budgets_mod.load(args.budgets)
        for r in results:
            verdict = budgets_mod.judge_sweep(r, gate)
            if verdict.missing:
                print(f"BUDGET {r.label}: no sweep budget over [{r.range[0]}, {r.range[1]}) in "
                      f"{args.budgets}; record one with --write-budgets")
            elif verdict.failed or verdict.better:
                print(f"BUDGET {r.label}: {verdict.message()}")
            status |= verdict.failed and not verdict.missing
    return status


def build_parser() -> argparse.ArgumentParser:
    from . import __version__
    from .study import command as study_command

    parser = argparse.ArgumentParser(prog="gelucheck", description=__doc__)
    parser.add_argument("--version", action="version", version=f"gelucheck {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    _add_reference(sub)
    _add_measure(sub)
    study_command.add(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    args.argv = argv
    handlers = {"reference": _reference, "list": _list, "compare": _compare,
                "consistency": _consistency, "html": _html,
                "budgets": _budgets, "sweep": _sweep, "study": _study, "drift": _drift,
                "bench": _bench,
                "check": lambda a: _measure(a, with_drift=False),
                "report": lambda a: _measure(a, with_drift=True)}
    try:
        return handlers[args.command](args)
    except GelucheckError as exc:  # bad input, damaged data: said plainly; anything else is a bug
        print(f"gelucheck: error: {exc}", file=sys.stderr)
        return 2


def run() -> None:
    """The command line (the ``gelucheck`` script, ``python -m gelucheck``): main, then out
    without the interpreter's teardown - torch's and numba's took 0.5 s of every command
    here (3.5 against 4.1 s for the whole-float32 sweep of torch's GELU). The output is
    flushed and the exit handlers run (multiprocessing's, the isolated children's cleanup,
    logging's) before the process ends with main's status; a bug's traceback takes the
    usual way."""
    import atexit

    try:
        status = main()
    except SystemExit as exc:  # argparse's: --help, a bad option
        status = exc.code
    if not isinstance(status, int):  # sys.exit's rules: None is 0, anything else printed, 1
        if status is not None:
            print(status, file=sys.stderr)
        status = 0 if status is None else 1
    sys.stdout.flush()
    sys.stderr.flush()
    atexit._run_exitfuncs()  # (no public name: sys.exit runs the same at the teardown)
    os._exit(status)


if __name__ == "__main__":
    run()

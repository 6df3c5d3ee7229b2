"""``gelucheck sweep``: every float32 input of one or more implementations."""
from __future__ import annotations

from ..shared_options import add_range_option
from . import options


def add(sub) -> None:
    sweep = sub.add_parser("sweep", help="every float32 input (or a --range of encodings) of "
                           "one or more implementations, against one reference pass")
    options.add_one_function(sweep, "sweep", "float32", "float32 (the only one to sweep)")
    add_range_option(sweep.add_argument)
    options.add_engine(sweep, "tasks")
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
    sweep.set_defaults(handler=run)


def run(args) -> int:
    from .. import output_files, published
    from ..report import jsonio, tables
    from ..sweep.reference import require
    from ..sweep.runner import check_dtype, parse_range, start_fork_server, sweep

    check_dtype(args.dtype)
    span = parse_range(args.range)
    json_path = output_files.file(args.json, "--json")
    output_files.folder(args.checkpoint, "--checkpoint")
    output_files.distinct(("--json", json_path), ("--write-budgets", args.write_budgets),
                          ("--checkpoint", args.checkpoint))
    # named, not resolved: the sweep resolves them (importing the frameworks) while its
    # workers start, and refuses an unknown or unavailable one before any task runs
    specs = options.named_specs(args, "sweep")
    engine = "dask" if args.scheduler else args.engine
    start_fork_server(specs, span, args.workers, engine)  # importing meanwhile
    require(args.function)  # erf's: the C library checked, before any work
    results = sweep(specs, args.function, span, args.workers, args.checkpoint,
                    progress=not args.no_progress, engine=engine, scheduler=args.scheduler)
    for r in results:
        who = f"{r.identity.id} {r.identity.function} float32"
        if r.failure:
            print(f"ERROR {who}: {r.failure.reason}")
            continue
        print(f"{who} [{r.range[0]}, {r.range[1]}): {tables.sweep_figures(r)}, "
              f"{_timing(r.wall_s, r.n_evaluated)}; "
              f"{r.n_slow_reference:,} too close for float64, each proven (read from the "
              "stored proofs, else by Arb or mpmath)")
        documented = published.beside(r)
        if documented:
            print(f"  {documented}")
    if args.profile:
        _sweep_profile(results)
    if json_path:
        jsonio.write(results, json_path)
    status = 2 if any(r.failure for r in results) else 0
    return max(status, _sweep_budgets(args, results))


def _timing(wall_s: float | None, computed: int | None) -> str:
    """The sweep's time and its rate over the inputs computed now, each with its significant
    digits: a range of 16 inputs had read "0.0 s (0.0 M inputs/s ...)"."""
    if wall_s is None or computed is None:
        return "time not measured"
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
    engine = measured[0].engine
    if engine is not None:
        where = {"here": "in this process", "local": "on a local pool",
                 "dask": "on Dask"}.get(engine["name"], engine["name"])
        print(f"  engine: {engine['tasks']} tasks {where}, {engine['workers']} worker(s): "
              f"{engine['overhead_s'] / engine['tasks']:.3f} s per task of workers' time "
              "outside the tasks (starting, dispatch, transfer, waiting for the last)")
    if measured[0].compile_s is not None:
        print(f"  not in these figures: the compiled loops ready in {measured[0].compile_s:.2f} s "
              "before the sweep (numba compiles them once, then loads its disk cache)")


def _sweep_budgets(args, results) -> int:
    """--write-budgets records, --budgets judges (against figures of the same range)."""
    from .. import budgets as budgets_mod
    from .. import judge

    return options.record_and_gate(args, results, budgets_mod.SWEEP_KEY,
                                   budgets_mod.sweep_entry, judge.sweep_line)

"""``gelucheck consistency``: every call path against the bulk result."""
from __future__ import annotations

import os
import sys

from ..formats import FORMATS
from . import options


def add(sub) -> None:
    consistency = sub.add_parser(
        "consistency", help="same input, same output: every implementation along other call "
        "paths (alone, short arrays, strided and transposed views, module/out=/compiled "
        "calls, one thread) against its bulk result")
    options.add_selection(consistency)
    options.add_impl(consistency)
    consistency.add_argument("--workers", type=options.positive, default=os.cpu_count() or 1,
                             help="processes (default: the number of cores)")
    consistency.add_argument("--write-budgets", metavar="FILE",
                             help="record each measured path's count of differing outputs in "
                             "this budgets file (its entries for those cases must exist)")
    consistency.set_defaults(handler=run)


def run(args) -> int:
    from .. import budgets as budgets_mod
    from .. import output_files, signatures
    from ..checks import consistency
    from ..report import tables

    json_path = output_files.file(args.json, "--json")
    markdown_path = output_files.file(args.markdown, "--markdown")
    output_files.distinct(("--json", json_path), ("--markdown", markdown_path),
                          ("--write-budgets", args.write_budgets))
    if args.budgets:
        budgets_mod.load(args.budgets)  # a missing or damaged file: said before the work
    impls = options.selected(args)
    dtypes = args.dtype or list(FORMATS.values())
    results = consistency.run(impls, dtypes, args.workers, progress=not args.no_progress)
    for r in results:
        if r.failure is None:
            r.diagnosis = signatures.diagnose_paths(r)
    options.show(results, json_path, markdown_path)
    for r in results:
        for sig in r.diagnosis or ():
            print(tables.wrapped(f"{r.label}: signature {sig.line()}"))
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
            entry = recorded.get(r)
            if entry is None:
                print(f"warning: no entry {r.identity.key} in {args.write_budgets}: run "
                      "`gelucheck budgets --write` first", file=sys.stderr)
            elif r.failure is None:
                recorded.record(r.identity, {**entry,
                                             "inconsistent": budgets_mod.consistency_entry(r)})
        budgets_mod.write(args.write_budgets, recorded)
    return max(status, options.judge_consistency(args, results))

"""``gelucheck search``: float64 worst cases found by search, settled by mpmath."""
from __future__ import annotations

import sys

from ..errors import UsageError
from ..formats import FORMATS
from . import options

DEFAULT_EVALUATIONS = 10_000_000


def add(sub) -> None:
    p = sub.add_parser("search", help="float64 inputs with the largest errors, found by a "
                       "seeded search (a lower bound of the true largest error), each "
                       "settled by mpmath")
    options.add_one_function(p, "search", "float64",
                             "float64 (float32 has every input: gelucheck sweep)")
    p.add_argument("--evaluations", type=options.positive, metavar="N",
                   help=f"stop after the round that reaches N evaluations (default: "
                   f"{DEFAULT_EVALUATIONS:,} unless --seconds is given); the same N and "
                   "--seed give the same result with any number of workers")
    p.add_argument("--seconds", type=options.positive, metavar="S",
                   help="stop after the round that ends past S seconds (its evaluations are "
                   "printed: give them as --evaluations to run the same search again)")
    p.add_argument("--seed", type=int, default=0, help="the search's seed (default 0)")
    options.add_engine(p, "rounds")
    p.add_argument("--json", metavar="FILE", help="write the results as JSON")
    p.add_argument("--checkpoint", metavar="DIR", help="keep each finished round here and "
                   "read it back when the same search runs again")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--budgets", metavar="FILE", help="a CI gate: exit 1 when the search "
                   "finds more than the search budget recorded there for the same seed and "
                   "evaluations (another search is not comparable: said, not gated)")
    p.add_argument("--write-budgets", metavar="FILE", help="record this search's figure in "
                   "the budgets file (its float64 entries must exist)")
    p.set_defaults(handler=run)


def run(args) -> int:
    from .. import budgets as budgets_mod
    from .. import judge, output_files, published
    from ..report import jsonio
    from ..search.diagnose import SIDE
    from ..search.run import run as search_one
    from ..search.strategy import Budget
    from ..sweep.worker import resolve

    if args.dtype.name != "float64":
        raise UsageError(f"--dtype {args.dtype.name}: the search is for float64; float32 has "
                         "every input (gelucheck sweep), 16-bit dtypes every input in check")
    from ..reference import arbref

    if not arbref.available():
        raise UsageError("gelucheck search needs python-flint (Arb, its reference): pip install "
                         "'gelucheck[search]'")
    json_path = output_files.file(args.json, "--json")
    output_files.folder(args.checkpoint, "--checkpoint")
    output_files.distinct(("--json", json_path), ("--write-budgets", args.write_budgets),
                          ("--checkpoint", args.checkpoint))
    named = options.named_specs(args, "search")
    from ..sweep.cluster import spec_of
    from ..sweep.runner import start_fork_server

    # importing while the implementations are resolved here
    start_fork_server(named, None, args.workers, args.engine, args.scheduler)

    specs = []  # one search per implementation: (what the workers rebuild it from, it)
    for s in named:
        for impl in resolve(s):
            if s["kind"] == "user" or ":" in s["impl"] or FORMATS["float64"] in impl.dtypes:
                specs.append((s if s["kind"] == "user" else spec_of(impl, args.framework),
                              impl))
            else:  # of a whole backend, those that take float64
                print(f"skipped {impl.id}: it takes "
                      f"{', '.join(f.name for f in impl.dtypes)}, not float64", file=sys.stderr)
    if not specs:
        raise UsageError(f"no implementation named takes float64 {args.function.name}")
    evaluations = args.evaluations or (None if args.seconds else DEFAULT_EVALUATIONS)
    results = []
    for spec, impl in specs:
        r = search_one(spec, impl, Budget(evaluations, args.seconds), args.seed,
                       args.workers, args.engine, args.scheduler, not args.no_progress,
                       args.checkpoint)
        results.append(r)
        print(_line(r))
        for sig in r.diagnosis or ():
            print(f"  signature {sig.line()}")
        if r.diagnosis == []:
            print(f"  signatures: none on the {2 * SIDE + 1:,} inputs around the worst")
        documented = published.beside(r)
        if documented:
            print(f"  {documented}")
    if json_path:
        jsonio.write(results, json_path)
    status = 2 if any(r.failure for r in results) else 0
    return max(status, options.record_and_gate(args, results, budgets_mod.SEARCH_KEY,
                                               budgets_mod.search_entry, judge.search_line))


def _line(r) -> str:
    who = f"{r.identity.backend}:{r.identity.implementation} {r.identity.function} float64"
    if r.failure:
        return f"ERROR {who}: {r.failure.reason}"
    f = r.figures
    return (f"{who}: at least {f.max_ulp:.4g} ulp (search: {r.evaluations:,} evaluations, "
            f"seed {r.seed}, {r.wall_s:.1f} s) at x = {f.worst_input!r} ({f.worst_input_hex}): "
            f"returned {f.computed!r} ({f.computed.hex()}), correctly rounded {f.exact!r} "
            f"({f.exact.hex()}); settled by mpmath ({f.settled} candidates)")

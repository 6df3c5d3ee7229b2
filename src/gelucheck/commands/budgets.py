"""``gelucheck budgets``: measure and (re)write the budgets file."""
from __future__ import annotations

from ..errors import UsageError
from ..formats import FORMATS
from ..functions import FUNCTIONS
from . import options


def add(sub) -> None:
    from ..backends import backend_names

    budgets = sub.add_parser("budgets", help="measure every available backend and (re)write "
                             "the budgets file, keeping its recorded defects and comments")
    budgets.add_argument("--write", metavar="FILE", required=True,
                         help="the budgets file (gelucheck's own: "
                         "src/gelucheck/data/budgets.toml)")
    budgets.add_argument("--backend", action="append",
                         type=options.choices("backend", backend_names()),
                         help="measure only this backend (repeatable; default: every available "
                         "one, or none with --impl); the others keep their entries, e.g. "
                         "torch-cuda measured on a GPU machine")
    budgets.add_argument("--function", action="append", type=options.choices("function", FUNCTIONS),
                         help="with --impl: what your callable computes (repeatable)")
    options.add_impl(budgets)
    budgets.add_argument("--from-report", metavar="REPORT.json", action="append",
                         help="record the figures of a saved `gelucheck report --json` instead "
                         "of measuring (repeatable); the others keep their entries")
    budgets.set_defaults(handler=run)


def run(args) -> int:
    from pathlib import Path

    from .. import budgets as budgets_mod
    from .. import measurement, signatures
    from ..backends import implementations
    from ..report import jsonio
    from ..results import AccuracyResult

    path = Path(args.write)
    old = budgets_mod.load(path) if path.exists() else budgets_mod.Budgets()
    if args.from_report:
        if args.backend or args.impl:
            raise UsageError("budgets: --backend and --impl measure, --from-report reads: "
                             "give one")
        results: list = [r for p in args.from_report for r in jsonio.read_report(p)[0]
                   if isinstance(r, AccuracyResult)]
        if not results:
            raise UsageError(f"{', '.join(args.from_report)}: no accuracy results to record")
    else:
        chosen = implementations(args.backend, args.impl, args.function, options.user_options(args),
                                 every_backend=not args.impl)
        if args.backend and chosen.unavailable:  # asked for by name: nothing would be written
            name, reason = chosen.unavailable[0]
            raise UsageError(f"backend {name} is unavailable: {reason}")
        results = measurement.run(chosen.implementations, list(FORMATS.values()), with_drift=False)
    new = budgets_mod.Budgets(defects=old.defects)
    new.entries = dict(old.entries)  # backends not installed here keep their budgets
    proposed = 0
    for r in results:
        if isinstance(r, AccuracyResult) and r.failure is None:
            k = budgets_mod.key(r)
            new.entries[k] = budgets_mod.entry_from(r, old.entries.get(k))
            for name in signatures.propose(r, new.entries[k], new.defects):
                print(f"proposed defect {name} for {r.label}: review and reword it in {path}")
                proposed += 1
    budgets_mod.write(path, new)
    print(f"{len(results)} budgets written to {path}"
          + (f"; {proposed} defects proposed from the signatures found" if proposed else ""))
    return 0

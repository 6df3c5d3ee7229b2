"""``gelucheck budgets``: measure and (re)write the budgets file."""
from __future__ import annotations

from .. import tiers
from ..errors import UsageError
from ..formats import FORMATS
from ..functions import FUNCTIONS
from . import options

REACHABLE = "reachable"


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
    budgets.add_argument("--kernel-tier", action="append", metavar="TIER", dest="record_tiers",
                         type=options.choices("kernel tier", (*tiers.CHOICES, REACHABLE)),
                         help="measure with the CPU kernels capped at this tier, in a process "
                         f"of its own (repeatable: {', '.join(tiers.CHOICES)}, or {REACHABLE}: "
                         "every tier this CPU can run); each result is recorded under the "
                         "tier it ran on (default: as the environment sets the kernels)")
    budgets.set_defaults(handler=run)


def _measure_tiers(args) -> list:
    """Each tier asked for, measured by `gelucheck report` in a process of its own (the caps
    are read when the libraries load); a backend without tiers is recorded from the first
    tier's run, and said where another tier's run gives it other figures."""
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    from ..report import jsonio
    from ..results import AccuracyResult

    asked = [t for a in args.record_tiers for t in (tiers.reachable() if a == REACHABLE else [a])]
    selection = [*(a for b in args.backend or () for a in ("--backend", b)),
                 *(a for i in args.impl or () for a in ("--impl", i)),
                 *(a for f in args.function or () for a in ("--function", f.name)),
                 *(["--framework", args.framework] if args.impl else [])]
    results: list = []
    untiered: dict = {}
    with tempfile.TemporaryDirectory(prefix="gelucheck-tiers-") as folder:
        for tier in dict.fromkeys(asked):
            out = Path(folder, f"{tier}.json")
            print(f"measuring at kernel tier {tier} ...", flush=True)
            done = subprocess.run([sys.executable, "-m", "gelucheck", "report", "--no-progress",
                                   "--json", str(out), "--kernel-tier", tier, *selection],
                                  capture_output=True, text=True)
            if not out.exists():
                raise UsageError(f"the run at kernel tier {tier} failed (exit "
                                 f"{done.returncode}): {done.stderr.strip()[-800:]}")
            for r in jsonio.read_report(out)[0]:
                if not isinstance(r, AccuracyResult) or r.identity.kernel_tier is not None:
                    results.append(r)
                elif r.identity.key not in untiered:
                    untiered[r.identity.key] = r
                    results.append(r)
                elif r.figures != untiered[r.identity.key].figures:
                    print(f"warning: {r.label} has no kernel tier, yet its figures at {tier} "
                          "differ from the first tier's: the first tier's are recorded",
                          file=sys.stderr)
    return results


def _previous(old, identity) -> dict | None:
    """The entry whose defects a new one keeps: its own tier's, else the nearest recorded
    tier's (a tier recorded for the first time starts from what is known of the others)."""
    from ..budgets import MEASURED_ELSEWHERE

    entry = old.lookup(identity)
    tier = old.missing_tier(identity)
    if entry is None and tier is not None:
        nearest = old.lookup(identity, old.nearest_tier(identity.backend, tier)) or {}
        # what `consistency` and `sweep` measured on that tier is not this tier's
        entry = {k: v for k, v in nearest.items() if k not in MEASURED_ELSEWHERE} or None
    return entry


def run(args) -> int:
    import copy
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
    elif args.record_tiers:
        results = _measure_tiers(args)
    else:
        chosen = implementations(args.backend, args.impl, args.function, options.user_options(args),
                                 every_backend=not args.impl)
        if args.backend and chosen.unavailable:  # asked for by name: nothing would be written
            name, reason = chosen.unavailable[0]
            raise UsageError(f"backend {name} is unavailable: {reason}")
        results = measurement.run(chosen.implementations, list(FORMATS.values()), with_drift=False)
    new = copy.deepcopy(old)  # backends not measured here keep their budgets
    proposed = 0
    for r in results:
        if isinstance(r, AccuracyResult) and r.failure is None:
            entry = budgets_mod.entry_from(r, _previous(old, r.identity))
            for name in signatures.propose(r, entry, new.defects):
                print(f"proposed defect {name} for {r.label}: review and reword it in {path}")
                proposed += 1
            new.record(r.identity, entry)
    budgets_mod.write(path, new)
    print(f"{len(results)} budgets written to {path}"
          + (f"; {proposed} defects proposed from the signatures found" if proposed else ""))
    return 0

"""``gelucheck reference``: build or verify the stored reference data."""
from __future__ import annotations

from ..errors import refuse_repeats
from ..formats import FORMATS
from ..functions import FUNCTIONS
from . import options


def add(sub) -> None:
    ref = sub.add_parser("reference", help="build or verify the stored reference data")
    ref.set_defaults(handler=run)
    refsub = ref.add_subparsers(dest="action", required=True)
    build = refsub.add_parser("build", help="regenerate reference/ with mpmath")
    build.add_argument("--dtype", action="append", type=options.choices("dtype", FORMATS),
                       help="a format to rebuild (repeatable; default: all)")
    build.add_argument("--function", action="append", type=options.choices("function", FUNCTIONS),
                       help="a function to build (repeatable; default: all); every other "
                       "function's files stay as they are")
    build.add_argument("--workers", type=options.positive, default=None,
                       help="processes (default: cores)")
    build.add_argument("--directory", default=None, help="where the data lives")
    verify = refsub.add_parser("verify", help="check reference/ against its manifest, mpmath "
                               "and Arb")
    verify.add_argument("--full", action="store_true", help="re-derive every stored value")
    verify.add_argument("--dtype", action="append", type=options.choices("dtype", FORMATS),
                        help="a format to verify (repeatable; default: all)")
    verify.add_argument("--function", action="append",
                        type=options.choices("function", FUNCTIONS),
                        help="a function to verify (repeatable; default: all)")
    verify.add_argument("--workers", type=options.positive, default=2,
                        help="processes for the re-derivation (default: 2)")
    verify.add_argument("--directory", default=None,
                        help="the data to verify (default: the data in use)")
    verify.add_argument("--no-arb", action="store_true", help="skip the Arb cross-check")


def run(args) -> int:
    from ..reference import arbref
    from ..reference.build import build
    from ..reference.verify import verify

    refuse_repeats("--function", args.function)
    refuse_repeats("--dtype", args.dtype)
    if args.action == "build":
        build(args.dtype, args.workers, args.directory, functions=args.function)
        return 0
    report = verify(args.dtype, args.full, args.directory, args.workers, arb=not args.no_arb,
                    functions=args.function)
    for fmt, n in report.checked.items():
        line = f"{fmt}: {n} inputs × {report.functions[fmt]} functions re-derived with mpmath"
        if fmt in report.arb_certified:
            unc = report.arb_uncertified[fmt]
            line += (f"; Arb proved {report.arb_certified[fmt]} correctly rounded, "
                     f"{len(unc)} not decided" + (f" (first: {', '.join(unc[:3])})" if unc else ""))
        print(line)
    if not arbref.available() and not args.no_arb:
        print("Arb cross-check skipped: python-flint is not installed (pip install python-flint)")
    proofs = _verify_proofs(args)
    for problem in report.problems + (proofs.problems if proofs else []):
        print(f"ERROR {problem}")
    for mismatch in report.mismatches[:20]:
        print(f"MISMATCH {mismatch}")
    ok = report.ok and (proofs is None or proofs.ok)
    print("reference data OK" if ok else "reference data FAILED verification")
    return 0 if ok else 1


def _verify_proofs(args):
    """The sweep's stored proofs (float32 inputs; part of the package, not of --directory),
    each entry checked as the reference's are; None where not asked for."""
    from ..formats import FLOAT32
    from ..sweep import proof_table

    if args.directory is not None or (args.dtype and FLOAT32 not in args.dtype):
        return None
    functions = [f.name for f in args.function] if args.function else None
    found = proof_table.verify(functions, args.full, arb=not args.no_arb)
    if found.checked:
        print(f"sweep proofs ({proof_table.PATH.name}): {sum(found.checked.values())} entries "
              f"of {len(found.checked)} functions re-derived with mpmath"
              + (f"; Arb proved {found.arb_proven}" if found.arb_proven else ""))
    return found

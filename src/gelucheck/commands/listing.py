"""``gelucheck list``: every backend and implementation, available or not, and why."""
from __future__ import annotations


def add(sub) -> None:
    listing = sub.add_parser("list", help="every backend and implementation, available or "
                             "not, and why")
    listing.add_argument("--fingerprint", action="store_true",
                         help="also which GELU form each implementation computes, per dtype, "
                         "read off its outputs (runs each on the stored inputs)")
    listing.set_defaults(handler=run)


def run(args) -> int:
    from ..backends import backend_names, get_backend

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


def _print_fingerprints(impl) -> None:
    """Per dtype, the formula the implementation's outputs compute (checks.fingerprint)."""
    from ..checks import fingerprint
    from ..checks.case import Case
    from ..errors import ImplementationError
    from ..report.tables import fingerprint_text

    if not fingerprint.applies(impl):
        return
    for fmt in impl.dtypes:
        try:
            found = fingerprint.check(Case.load(impl, fmt))
        except ImplementationError as exc:
            print(f"      {fmt.name:8s} fingerprint: ERROR {exc}")
            continue
        print(f"      {fmt.name:8s} fingerprint: {fingerprint_text(found)}")

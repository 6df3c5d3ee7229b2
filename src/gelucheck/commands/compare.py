"""``gelucheck compare``: what got worse or better between two reports."""
from __future__ import annotations


def add(sub) -> None:
    compare = sub.add_parser("compare", help="what got worse or better between two JSON reports")
    compare.add_argument("old", help="the earlier JSON report")
    compare.add_argument("new", help="the later JSON report")
    compare.add_argument("--fail-on-regression", action="store_true",
                         help="exit 1 when anything got worse, or a result of the old report "
                         "has no counterpart in the new one")
    compare.add_argument("--allow-missing", action="store_true",
                         help="with --fail-on-regression: a result missing from the new report "
                         "is no failure")
    compare.set_defaults(handler=run)


def run(args) -> int:
    from ..report import compare, jsonio

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

"""``gelucheck drift``: two implementations against each other."""
from __future__ import annotations

import sys

from ..errors import UsageError
from ..formats import FORMATS
from . import options


def add(sub) -> None:
    pair = sub.add_parser(
        "drift", help="two implementations against each other, e.g. torch's F.gelu and ONNX "
        "Runtime's Gelu: how many outputs differ, by how much, and where each puts the minimum")
    for which in ("first", "second"):
        pair.add_argument(which, metavar=which.upper(), help="backend:name[@function], e.g. "
                          "torch:F.gelu@gelu or onnxruntime:Gelu@gelu_tanh (the function may be "
                          "left out where the name has one, or gelu among several), or your "
                          "callable as user:MOD:FN@function")
    pair.add_argument("--dtype", action="append", type=options.choices("dtype", FORMATS),
                      help=f"a dtype: {', '.join(FORMATS)} (repeatable; default: every dtype "
                      "both take)")
    pair.add_argument("--json", metavar="FILE", help="write the results as JSON")
    pair.add_argument("--markdown", metavar="FILE", help="write the table as Markdown")
    options.add_user_options(pair)
    pair.set_defaults(handler=run)


def run(args) -> int:
    from .. import output_files
    from ..backends import member
    from ..checks import drift

    user = options.user_options(args)
    first, second = member(args.first, user), member(args.second, user)
    if first.function.family != second.function.family:
        raise UsageError(f"{args.first} computes {first.function.name} and {args.second} "
                         f"{second.function.name}: not comparable")
    json_path = output_files.file(args.json, "--json")
    markdown_path = output_files.file(args.markdown, "--markdown")
    output_files.distinct(("--json", json_path), ("--markdown", markdown_path))
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
    options.show(results, json_path, markdown_path)
    failed = [r for r in results if r.failure]
    for r, failure in ((r, r.failure) for r in failed if r.failure):
        print(f"ERROR {r.label}: {failure.reason}")
    return 2 if failed else 0

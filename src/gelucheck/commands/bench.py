"""``gelucheck bench compare``: benchmark runs against their noise band."""
from __future__ import annotations

from ..errors import UsageError


def add(sub) -> None:
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
    bench.set_defaults(handler=run)


def run(args) -> int:
    import math

    from .. import output_files
    from ..report import bench, tables

    floor = bench.FLOOR if args.floor is None else args.floor
    if not 0 <= floor < 10:
        raise UsageError(f"--floor {args.floor}: a fraction such as 0.1 (10%)")
    markdown_path = output_files.file(args.markdown, "--markdown")
    output_files.distinct(("--markdown", markdown_path),
                          inputs=(("old", args.old), *(("new", p) for p in args.new)))
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

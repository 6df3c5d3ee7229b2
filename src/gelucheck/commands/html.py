"""``gelucheck html``: saved reports as one self-contained page."""
from __future__ import annotations

import itertools

from ..errors import UsageError


def add(sub) -> None:
    page = sub.add_parser("html", help="render saved JSON reports as one self-contained HTML "
                          "page (several side by side, with what changed between them)")
    page.add_argument("reports", nargs="*", metavar="REPORT.json", help="saved reports")
    page.add_argument("--study", metavar="STUDY.json", action="append", default=[],
                      help="also a saved study (`gelucheck study moons --json`)")
    page.add_argument("-o", "--output", required=True, metavar="FILE", help="the page")
    page.set_defaults(handler=run)


def run(args) -> int:
    from pathlib import Path

    from .. import output_files
    from ..report import compare, html, jsonio
    from ..study import output as study_output

    target = output_files.file(args.output, "--output")
    output_files.distinct(("--output", target), inputs=(
        *(("REPORT.json", p) for p in args.reports), *(("--study", p) for p in args.study)))
    if not args.reports and not args.study:
        raise UsageError("html: give at least one REPORT.json or --study STUDY.json")
    studies = [(p, study_output.read(p)) for p in args.study]
    loaded = [(Path(p).stem, *jsonio.read_report(p)) for p in args.reports]
    names = [n for n, _, _ in loaded]
    if len(set(names)) < len(names):  # two files of the same name: tell them apart
        loaded = [(f"{i + 1}:{n}", r, e) for i, (n, r, e) in enumerate(loaded)]
    diffs = [(f"Compare {a[0]} -> {b[0]}", compare.compare(a[1], b[1]))
             for a, b in itertools.pairwise(loaded)]
    assert target is not None  # --output is required
    sections = []
    for path, study in studies:
        with study_output.damage_named(path):  # its figures' data
            sections.append(study_output.html_section(study))
    target.write_text(html.render(loaded, diffs, extra=sections))
    print(f"{target}: {target.stat().st_size / 1e6:.2f} MB")
    return 0

"""The one-screen summary a report opens with, and the standing its closing verdict counts:
for each implementation and function, its worst figure and share correctly rounded per
dtype, where it stands against its budget and the recorded defects that apply. The command
line, the Markdown and the HTML page take both from here."""
from __future__ import annotations

from .. import judge
from ..budgets import Budgets
from ..formats import FORMATS
from ..results import AccuracyResult
from .cells import NOT_TAKEN, fmt_max, fmt_share

# A result's standing against its budget, worst first: a row shows its worst dtype's.
STANDINGS = ("failed", "worse", "missing", "better", "within")
SAID = {"failed": "ERROR", "worse": "WORSE", "missing": "no budget", "better": "better",
        "within": "within"}


def standing(result: AccuracyResult, budgets: Budgets) -> tuple[str, list[str]]:
    """(failed / worse / missing / better / within, the recorded defects that apply)."""
    verdict = judge.judge(result, budgets)
    if result.failure:
        return "failed", verdict.defects
    if verdict.missing:
        return "missing", []
    if verdict.worse or verdict.failed:
        return "worse", verdict.defects
    return ("better" if verdict.better else "within"), verdict.defects


def counts(results: list, budgets: Budgets) -> dict[str, int]:
    """How many accuracy results stand where (tables.verdict_line's counts)."""
    out = {"within": 0, "better": 0, "worse": 0, "missing": 0, "failed": 0}
    for r in results:
        if isinstance(r, AccuracyResult):
            kind, _ = standing(r, budgets)
            out["within" if kind == "better" else kind] += 1
            out["better"] += kind == "better"
    return out


def cell(result: AccuracyResult | None) -> str:
    """The worst figure and the share correctly rounded: "0.5 (100%)", "inf (69.5%)"."""
    if result is None:
        return NOT_TAKEN
    if result.failure:
        return "ERROR"
    if result.figures is None:
        return "not measured"
    f = result.figures
    share = fmt_share(f.n_inputs - f.not_correctly_rounded, f.n_inputs)
    return f"{fmt_max(f)} ({share})"


def rows(results: list, budgets: Budgets) -> tuple[list[str], list[list]]:
    """One row per implementation and function: a cell per dtype, the standing (the worst of
    its dtypes'), the defects recorded for any of them."""
    by_row: dict[tuple[str, str], dict[str, AccuracyResult]] = {}
    for r in results:
        if isinstance(r, AccuracyResult):
            by_row.setdefault((r.identity.id, r.identity.function), {})[r.identity.dtype] = r
    dtypes = [d for d in FORMATS if any(d in row for row in by_row.values())]
    header = ["implementation", "function", *dtypes, "budget", "recorded defects",
              "signatures found"]
    body = []
    for (name, function), row in by_row.items():
        stands = [standing(r, budgets) for r in row.values()]
        worst = min((kind for kind, _ in stands), key=STANDINGS.index)
        defects = sorted({d for _, found in stands for d in found})
        found = list(dict.fromkeys(sig.name for r in row.values() for sig in r.diagnosis or ()))
        looked = any(r.diagnosis is not None for r in row.values())
        body.append([name, function, *(cell(row.get(d)) for d in dtypes), SAID[worst],
                     ", ".join(defects) or "-",
                     ", ".join(found) or ("none" if looked else "not measured")])
    return header, body


TITLE = ("Summary: max ulp error (share correctly rounded) per dtype, the standing against the "
         "budget, the recorded defects that apply, the defect signatures found")
MORE = ("per region, the worst inputs, each signature's evidence, the minimum, the derivative's "
        "sign, the special inputs, fingerprints, drift: --details")


def lines(results: list, budgets: Budgets) -> list[str]:
    """The summary's rows as short lines, for results shown as they come (report's first
    results): per dtype the worst figure, then the standing."""
    header, body = rows(results, budgets)
    named = len(header) - 3  # implementation, function, the dtypes' cells, the standing
    wide = [max((len(row[i]) for row in body), default=0) for i in (0, 1)]  # the names
    return ["  ".join([row[0].ljust(wide[0]), row[1].ljust(wide[1]),
                       *(f"{d} {str(c).partition(' (')[0]}" for d, c in
                         zip(header[2:named], row[2:named])), row[named]])
            for row in body]

"""Accuracy tables in the style of the published ones: rows implementation and function,
columns dtype, cells max and mean ulp; one overall and one per region; then drift."""
from __future__ import annotations

import textwrap

from .. import published
from ..checks.regions import REGIONS
from ..formats import FORMATS
from ..results import (
    AccuracyResult,
    ConsistencyResult,
    DriftResult,
    MinimumFinding,
    SearchResult,
    SignFinding,
)
from .cells import NOT_TAKEN, fmt_max, fmt_share, fmt_ulp


def _cell(result: AccuracyResult | None, region: str | None) -> str:
    if result is None:
        return NOT_TAKEN
    if result.failure:
        return "ERROR"
    if result.all_nan:
        return "all NaN"
    if result.figures is None:
        return fmt_ulp(None)  # "not measured"
    figures = result.figures if region is None else result.figures.region(region)
    return "" if figures is None else f"{fmt_max(figures)} / {fmt_ulp(figures.mean_ulp)}"


def sweep_figures(result, swept: int | None = None) -> str:
    """A sweep's figures in one line, the same for the command and the pytest plugin: the
    mean is of the finite errors, said so where some are infinite; where every error is, the
    mean is inf, said so (there is no finite error to take it over)."""
    f = result.figures
    infinite = (" (every error infinite)" if f.n_infinite == f.n_inputs else
                f" over the finite errors ({f.n_infinite:,} infinite)" if f.n_infinite else "")
    of = f" (of {swept:,} swept)" if swept is not None else ""
    return (f"{f.n_inputs:,} inputs{of}, max {f.max_ulp:.4g} ulp at {f.worst_input!r} "
            f"({f.worst_input_hex}), mean {f.mean_ulp:.4g}{infinite}, correctly rounded "
            f"{result.correctly_rounded_fraction:.4%}")


def _measured(results: list) -> list[AccuracyResult]:
    return [r for r in results if isinstance(r, AccuracyResult)
            and (r.failure or r.figures is not None)]


def _diagnosed(results: list) -> list[AccuracyResult | SearchResult]:
    """The results whose signatures the signature tables show: the measured ones, and the
    searches (their signatures are those around the worst input)."""
    return [*_measured(results), *(r for r in results if isinstance(r, SearchResult))]


def accuracy_rows(results: list, region: str | None = None) -> tuple[list[str], list[list]]:
    acc = _measured(results)
    dtypes = [d for d in FORMATS if any(r.identity.dtype == d for r in acc)]
    rows: dict[tuple, dict] = {}
    for r in acc:
        row = (r.identity.id, r.identity.function)
        rows.setdefault(row, {})[r.identity.dtype] = r
    header = ["implementation", "function", *dtypes]
    body = [[impl, fn] + [_cell(by.get(d), region) for d in dtypes]
            for (impl, fn), by in rows.items()]
    return header, body


DRIFT_UNIT = " (*ulp diff: |first - second| in ulps of the correctly rounded value at that x)"


def drift_rows(results: list) -> tuple[list[str], list[list]]:
    header = ["exact", "tanh form", "dtype", "differ", "max ulp diff*", "at x", "max |diff|",
              "at x", "minimum shift"]
    return header, _drift_body(results, "tanh")


def runtime_rows(results: list) -> tuple[list[str], list[list]]:
    header = ["first", "second", "dtype", "differ", "max ulp diff*", "at x",
              "max |diff|", "at x", "minimum shift"]
    return header, _drift_body(results, "runtimes")


def _drift_body(results: list, pair: str) -> list[list]:
    body = []
    for r in results:
        if not isinstance(r, DriftResult) or r.figures is None or r.pair != pair:
            continue
        f, shift = r.figures, r.minimum_shift
        differ = round(f.differ_fraction * f.n_inputs)
        body.append([f"{r.backend}:{r.exact_implementation}", r.tanh_implementation, r.dtype,
                     fmt_share(differ, f.n_inputs, 2), fmt_ulp(f.max_ulp),
                     _where(f.max_ulp, f.at_ulp), f"{f.max_abs:.4e}", _where(f.max_abs, f.at),
                     "-" if shift is None else f"{shift:+.3g}"])
    return body


def _where(largest: float, x: float) -> str:
    """The input of the largest difference, or "nowhere" when no output differs."""
    return f"{x:.6g}" if largest > 0 else "nowhere"


def worst_rows(results: list) -> tuple[list[str], list[list]]:
    """Where each implementation is worst: the input (value and encoding) and both values."""
    header = ["implementation", "function", "dtype", "max ulp", "worst x", "hex", "computed",
              "exact", "not correctly rounded"]
    body = []
    for r in _measured(results):
        f = r.figures
        if f is None or f.max_ulp == 0:
            continue
        body.append([r.identity.id, r.identity.function, r.identity.dtype, fmt_max(f),
                     f"{f.worst_input:.9g}", f.worst_input_hex, f"{f.computed:.9g}",
                     f"{f.exact:.9g}", f"{f.not_correctly_rounded:,} of {f.n_inputs:,}"])
    return header, body


def signature_rows(results: list) -> tuple[list[str], list[list]]:
    """Each signature found, with its evidence (gelucheck.signatures)."""
    header = ["implementation", "function", "dtype", "signature", "inputs", "from x", "worst x",
              "region"]
    body = []
    for r in _diagnosed(results):
        for sig in r.diagnosis or ():
            body.append([r.identity.id, r.identity.function, r.identity.dtype
                         + (" (search)" if isinstance(r, SearchResult) else ""),
                         sig.name + (f" ({sig.detail})" if sig.detail else ""), f"{sig.count:,}",
                         "-" if sig.first is None else f"{sig.first:.6g}",
                         "-" if sig.worst is None else f"{sig.worst:.6g}", sig.region])
    return header, body


def signature_meanings(results: list) -> str:
    """What each signature found means and what to do, once per name."""
    seen: dict[str, str] = {}
    for r in _diagnosed(results):
        for sig in r.diagnosis or ():
            seen.setdefault(sig.name, sig.advice)
    return "\n".join(wrapped(f"{name}: {advice}") for name, advice in seen.items())


def minimum_rows(results: list) -> tuple[list[str], list[list]]:
    header = ["implementation", "function", "dtype", "plateau", "x* on it", "min value",
              "ulp error"]
    body = []
    for r in results:
        if not isinstance(r, AccuracyResult) or not isinstance(r.minimum, MinimumFinding):
            continue
        m = r.minimum
        body.append([r.identity.id, r.identity.function, r.identity.dtype,
                     f"[{m.plateau_lo:.9g}, {m.plateau_hi:.9g}] ({m.plateau_size})",
                     "yes" if m.true_argmin_on_plateau else "NO", f"{m.value:.9g}",
                     fmt_ulp(m.value_ulp_error)])
    return header, body


def sign_rows(results: list) -> tuple[list[str], list[list]]:
    header = ["implementation", "function", "dtype", "wrong sign", "false zero",
              "crossing around x*", "x* in it", "example"]
    body = []
    for r in results:
        if not isinstance(r, AccuracyResult) or not isinstance(r.sign, SignFinding):
            continue
        s = r.sign
        example = s.examples[0] if s.examples else None
        crossing = (f"[{s.crossing_lo:.9g}, {s.crossing_hi:.9g}]"
                    if s.crossing_lo is not None and s.crossing_hi is not None else "none")
        body.append([r.identity.id, r.identity.function, r.identity.dtype, s.n_wrong_sign,
                     s.n_false_zero, crossing + (f" ({s.sign_changes} changes)"
                                                 if s.sign_changes != 1 else ""),
                     "yes" if s.x_star_in_crossing else "NO",
                     "-" if example is None else
                     f"x={example['x']:.6g} ({example['x_hex']}): {example['computed']:.3g} "
                     f"vs {example['exact']:.3g}"])
    return header, body


def fingerprint_verdict(f) -> str:
    """MISMATCH, ok, or why there is no verdict."""
    if f.mismatch:
        return "MISMATCH"
    if f.formula == f.declared:
        return "ok"
    return "cannot tell in this dtype" if f.formula == "undecided" else "-"


def fingerprint_text(f) -> str:
    """What the outputs computed, against what was declared, in a few words."""
    verdict = {"MISMATCH": f"MISMATCH: declared {f.declared}", "ok": "as declared"}.get(
        fingerprint_verdict(f), fingerprint_verdict(f))
    return f"{f.formula} (margin {f.margin:.2f}; {verdict})"


def fingerprint_rows(results: list) -> tuple[list[str], list[list]]:
    header = ["implementation", "function", "dtype", "computes", "margin", "declared",
              "verdict", "preferred to the winner (share)"]
    body = []
    for r in results:
        f = getattr(r, "fingerprint", None)
        if not isinstance(r, AccuracyResult) or f is None:
            continue
        rivals = ", ".join(f"{k} {v['preferred_over_winner']:.2f}"
                           for k, v in f.candidates.items()
                           if v["preferred_over_winner"] is not None)
        body.append([r.identity.id, r.identity.function, r.identity.dtype, f.formula,
                     f"{f.margin:.3f}", f.declared or "-", fingerprint_verdict(f), rivals])
    return header, body


def consistency_rows(results: list) -> tuple[list[str], list[list]]:
    """Per implementation and dtype, each path whose outputs differ from the bulk result."""
    header = ["implementation", "function", "dtype", "path", "differ", "max ulp between",
              "path max ulp", "bulk max ulp", "example"]
    body = []
    for r in results:
        if not isinstance(r, ConsistencyResult):
            continue
        groups: dict[tuple, list] = {}  # paths with the same figures share a row
        for p in r.paths:
            if p.n_differ or p.error:
                key = (p.n_differ, p.max_ulp_difference, p.max_ulp, p.error)
                groups.setdefault(key, []).append(p)
        for same in groups.values():
            p, e = same[0], (same[0].examples[0] if same[0].examples else None)
            body.append([r.identity.id, r.identity.function, r.identity.dtype,
                         _path_names([q.name for q in same]),
                         "ERROR" if p.error else f"{p.n_differ:,} of {p.n_inputs:,}",
                         fmt_ulp(p.max_ulp_difference), fmt_ulp(p.max_ulp),
                         fmt_ulp(r.bulk_max_ulp),
                         p.error or ("-" if e is None else
                                     f"x={e['x']:.6g} ({e['x_hex']}): bulk {e['bulk']:.6g}, "
                                     f"path {e['path']:.6g}")])
    return header, body


def worst_path_rows(results: list) -> tuple[list[str], list[list]]:
    """The worst case of an implementation is the worst over every path: where a path is
    worse than the bulk contiguous result, which path, and by how much."""
    header = ["implementation", "function", "dtype", "bulk max ulp", "worst over paths",
              "on path", "example"]
    body = []
    for r in results:
        if not isinstance(r, ConsistencyResult) or r.bulk_max_ulp is None:
            continue
        worse = [p for p in r.paths if p.error is None and p.max_ulp is not None
                 and p.max_ulp > r.bulk_max_ulp]
        if not worse:
            continue
        top = max(p.max_ulp for p in worse if p.max_ulp is not None)
        names = [p.name for p in worse if p.max_ulp == top]
        e = next((p.examples[0] for p in worse if p.max_ulp == top and p.examples), None)
        body.append([r.identity.id, r.identity.function, r.identity.dtype,
                     fmt_ulp(r.bulk_max_ulp), fmt_ulp(top), _path_names(names),
                     "-" if e is None else f"x={e['x']:.6g} ({e['x_hex']}): path "
                     f"{e['path']:.6g} ({fmt_ulp(e['path_ulp'])} ulp)"])
    return header, body


def _path_names(names: list[str]) -> str:
    """length-2, length-3, ..., length-9 -> length-2..9; other names as they are."""
    lengths = sorted(int(n.split("-")[1]) for n in names if n.startswith("length-"))
    parts = [n for n in names if not n.startswith("length-")]
    runs: list[list[int]] = []
    for n in lengths:
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    parts += [f"length-{r[0]}" + (f"..{r[-1]}" if len(r) > 1 else "") for r in runs]
    return ", ".join(parts)


def special_rows(results: list) -> tuple[list[str], list[list]]:
    header = ["implementation", "function", "dtype", "input", "expected", "computed"]
    body = []
    for r in results:
        if not isinstance(r, AccuracyResult) or not isinstance(r.specials, dict):
            continue
        for label in r.failing_specials:
            s = r.specials[label]
            body.append([r.identity.id, r.identity.function, r.identity.dtype, label,
                         repr(s.expected), repr(s.computed)])
    return header, body


def impossible_rows(results: list) -> tuple[list[str], list[list]]:
    header = ["implementation", "function", "dtype", "results", "first x", "hex", "computed"]
    body = [[r.identity.id, r.identity.function, r.identity.dtype, r.figures.impossible,
             repr(r.figures.impossible_at), r.figures.impossible_at_hex,
             repr(r.figures.impossible_computed)]
            for r in _measured(results) if r.figures is not None and r.figures.impossible]
    return header, body


def search_rows(results: list) -> tuple[list[str], list[list]]:
    """What each float64 search found: at least so many ulps, where, by which search."""
    header = ["implementation", "function", "at least (ulp)", "at x", "returned",
              "correctly rounded", "evaluations", "seed", "signatures around it"]
    body = []
    for r in results:
        if not isinstance(r, SearchResult):
            continue
        f = r.figures
        if f is None:
            body.append([r.identity.id, r.identity.function, "ERROR", "", "", "", "", r.seed,
                         "not measured"])
            continue
        found = ("not measured" if r.diagnosis is None
                 else ", ".join(s.name for s in r.diagnosis) or "none")
        body.append([r.identity.id, r.identity.function, f"{f.max_ulp:.4g}",
                     f.worst_input_hex, f.computed.hex(), f.exact.hex(),
                     f"{r.evaluations:,}", r.seed, found])
    return header, body


COUNTED_FROM = {"exact": "exact value", "correctly-rounded": "rounded result"}


def documented_rows(results: list) -> tuple[list[str], list[list]]:
    """Documented vs measured, per measured result that a documented bound covers."""
    header = ["implementation", "function", "dtype", "documented", "counted from", "measured",
              "", "source"]
    body = []
    searched: list[AccuracyResult | SearchResult] = [
        r for r in results if isinstance(r, SearchResult) and r.figures is not None]
    for r in [*_measured(results), *searched]:
        bound = published.bound_for(r)
        if bound is None or r.figures is None:
            continue
        body.append([r.identity.id, r.identity.function, r.identity.dtype,
                     f"{bound.max_ulp:g}", COUNTED_FROM[bound.metric],
                     published.measured(bound, r, brief=True), published.verdict(bound, r),
                     bound.library])
    return header, body


WIDTH = 120  # the terminal report's widest line
KEYS = 2  # the columns that name a row (implementation, function): repeated in each block


def plain(header: list[str], body: list[list], width: int = WIDTH) -> str:
    """A table as text. Wider than ``width``, its columns after the first KEYS are split
    into blocks that fit, one under the other, each with the KEYS columns again - a figure
    is never cut, and a row is still named in every block."""
    widths = [max(len(str(c)) for c in col) for col in zip(header, *body)] if body else \
        [len(h) for h in header]
    blocks: list[list[int]] = []
    current: list[int] = []
    keys = min(KEYS, len(header))
    used = sum(widths[:keys]) + 2 * keys
    for i in range(keys, len(header)):
        if current and used + widths[i] > width:
            blocks.append(current)
            current, used = [], sum(widths[:keys]) + 2 * keys
        current.append(i)
        used += widths[i] + 2
    blocks.append(current)

    def table(columns: list[int]) -> str:
        cols = list(range(keys)) + columns
        # a block's last column of words (a list of defects) too wide for what is left is
        # wrapped at its spaces onto lines of its own; a word, and so a figure, is never cut
        last = cols[-1]
        room = width - sum(widths[i] + 2 for i in cols[:-1])
        shown = dict(enumerate(widths)) | {last: min(widths[last], max(room, len(header[last])))}

        def lines(row) -> list[str]:
            cells = [str(row[i]) for i in cols]
            tail = (textwrap.wrap(cells[-1], shown[last], break_long_words=False,
                                  break_on_hyphens=False) or [""]
                    if len(cells[-1]) > shown[last] else [cells[-1]])
            rows = [[*cells[:-1], tail[0]]] + [[""] * (len(cols) - 1) + [t] for t in tail[1:]]
            return ["  ".join(c.ljust(shown[i]) for c, i in zip(r, cols)).rstrip()
                    for r in rows]

        rule = ["-" * shown[i] for i in range(len(header))]
        return "\n".join([*lines(header), *lines(rule), *(t for r in body for t in lines(r))])

    return "\n\n".join(table(b) for b in blocks)


def wrapped(text: str, width: int = WIDTH) -> str:
    """A line of prose (a title, the environment, the verdict) within ``width``."""
    return "\n".join(textwrap.wrap(text, width, break_on_hyphens=False)) or text


def markdown(header: list[str], body: list[list]) -> str:
    esc = lambda c: str(c).replace("|", "\\|")
    rows = [header, ["---"] * len(header), *body]
    return "\n".join("| " + " | ".join(esc(c) for c in row) + " |" for row in rows)


def sections(results: list) -> list[tuple[str, tuple[list[str], list[list]]]]:
    """(title, table) for every table of a report, in reading order."""
    out = [("Max / mean ulp error, all inputs (the mean of the finite errors)",
            accuracy_rows(results))]
    for name, _, _ in REGIONS:
        out.append((f"Max / mean ulp error, {name}", accuracy_rows(results, name)))
    out.append(("Worst inputs", worst_rows(results)))
    out.append(("Defect signatures: the mechanism behind the errors (what each means: below)",
                signature_rows(results)))
    out.append(("GELU's negative minimum", minimum_rows(results)))
    out.append(("Sign of the derivative", sign_rows(results)))
    out.append(("Special inputs that miss their limit", special_rows(results)))
    out.append(("Results no value of the function can have (outside its range, or of the "
                "wrong sign)", impossible_rows(results)))
    out.append(("Float64 worst cases found by search (lower bounds, settled by mpmath)",
                search_rows(results)))
    out.append(("Documented accuracy beside the measured (data/published_bounds.toml)",
                documented_rows(results)))
    out.append(("Formula fingerprints: which GELU form the outputs compute", fingerprint_rows(
        results)))
    out.append(("Drift of the tanh form from exact GELU" + DRIFT_UNIT, drift_rows(results)))
    out.append(("Drift between implementations (trained in one, served in another)"
                + DRIFT_UNIT, runtime_rows(results)))
    out.append(("Paths whose outputs differ from the bulk result", consistency_rows(results)))
    out.append(("Worst case over every call path (where a path is worse than the bulk)",
                worst_path_rows(results)))
    return out


LEGEND = """\
Legend: figures are ulp errors against the correctly rounded value (0.5: correctly rounded;
"0.5+": within half an ulp, yet some results rounded the wrong way at a tie); "max / mean"
is the largest error and the mean of the finite errors; inf: a NaN or inf where the value is
finite (counted apart from the mean); ERROR: the implementation failed (said below the
tables); "not measured": a figure nobody measured; "-": a dtype it does not take."""


def verdict_line(counts: dict[str, int]) -> str:
    """The closing line of a report: how its results stand against their budgets."""
    better = f" ({counts['better']} clearly better: tighten it)" if counts.get("better") else ""
    return (f"verdict: {counts['within']} within budget{better}, {counts['worse']} worse than "
            f"budget, {counts['missing']} without a budget, {counts['failed']} could not be "
            "measured")


# The sections a report without --details keeps beside the summary: what no budget excuses
ALWAYS = ("Results no value of the function can have (outside its range, or of the wrong sign)",)


def render(results: list, style: str = "plain", environment: dict | None = None,
           budgets=None, details: bool = True) -> str:
    """The report as text or Markdown; with ``environment``, a header that says where it was
    measured; with ``budgets``, the one-screen summary first (report.summary); without
    ``details``, the summary alone (and what no budget excuses). Markdown sections fold
    (<details>) so the page pastes into an issue."""
    from . import summary
    from .environment import one_line

    parts = []
    if environment:
        parts.append(f"# gelucheck accuracy report\n\n{one_line(environment)}"
                     if style == "markdown" else wrapped(one_line(environment)))
    accuracy = any(isinstance(r, AccuracyResult) for r in results)
    if accuracy:
        parts.append(LEGEND)
    tables = sections(results)
    if budgets is not None and accuracy:
        tables.insert(0, (summary.TITLE, summary.rows(results, budgets)))
    if not details and budgets is not None and accuracy:
        tables = [t for t in tables if t[0] in (summary.TITLE, *ALWAYS) or _non_accuracy(t[0])]
    for title, (header, body) in tables:
        if not body:
            continue
        if style == "markdown":
            parts.append(f"<details open><summary><b>{title}</b></summary>\n\n"
                         f"{markdown(header, body)}\n\n</details>")
        else:
            parts.append(f"{wrapped(title)}\n{plain(header, body)}")
        if title.startswith("Defect signatures"):
            parts.append(signature_meanings(results))
    if not details and budgets is not None and accuracy:
        parts.append(wrapped(summary.MORE))
    return "\n\n".join(parts) + "\n"


def _non_accuracy(title: str) -> bool:
    """The sections of consistency results: a command that measured them (report
    --consistency) shows them whatever --details says."""
    return title.startswith(("Paths whose outputs", "Worst case over every call path"))

"""One self-contained HTML page of a report (or of several, side by side): nothing is loaded
from anywhere - figures are PNG data embedded in the page, the script and styles are inline,
and a Content-Security-Policy forbids every request, so the file opens offline and can be
attached to an issue.

Figures are drawn with matplotlib from what the results carry (each accuracy result's
profile, the sweeps' histograms, the minima), never by measuring again. matplotlib's PNGs
keep the page small and exact to what was measured; the only interaction a reader needs -
sorting tables - is a few lines of script.
"""
from __future__ import annotations

import base64
import html
import io
import math
from datetime import UTC, datetime

import numpy as np

from ..checks.profile import SCALE, transform
from ..checks.regions import REGIONS
from ..formats import FORMATS
from ..functions import get_function
from ..results import AccuracyResult, ConsistencyResult, DriftResult, MinimumFinding, SweepResult
from . import compare, tables
from .environment import one_line

CSP = ("default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
       "script-src 'unsafe-inline'")

STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em auto;max-width:1300px;color:#222}
h1{font-size:1.6em} h2{margin-top:1.6em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:.6em 0} td,th{border:1px solid #ccc;padding:2px 6px}
th{background:#f3f3f3;cursor:pointer} td.num{text-align:right;font-variant-numeric:tabular-nums}
.heat td{min-width:7em;text-align:center} .key span{display:inline-block;padding:1px 6px;
margin-right:4px} img{max-width:100%;display:block;margin:.4em 0} .env{color:#555}
details{margin:.4em 0} summary{cursor:pointer;font-weight:600}
"""

# Run when the page is opened with #selfcheck (the browser test does): every figure drawn
# with a size, and sorting a table by a numeric column puts it in order.
SELFCHECK = """
if(location.hash==='#selfcheck'){const imgs=[...document.images];
const drawn=imgs.filter(i=>i.complete&&i.naturalWidth>0&&i.getBoundingClientRect().width>0);
let sorted=null;const t=document.querySelector('table.sortable');if(t){
const th=[...t.tHead.rows[0].cells].find((c,k)=>t.tBodies[0].rows.length>1&&
t.tBodies[0].rows[0].cells[k].classList.contains('num'));if(th){th.click();
const k=[...th.parentNode.children].indexOf(th);const v=[...t.tBodies[0].rows].map(
r=>parseFloat(r.cells[k].dataset.v));sorted=v.every((x,i)=>i===0||isNaN(x)||isNaN(v[i-1])||
v[i-1]<=x);}}document.body.dataset.selfcheck=JSON.stringify({images:imgs.length,
drawn:drawn.length,sorted:sorted});}
"""

SCRIPT = """
function sortTable(th){const t=th.closest('table'),i=[...th.parentNode.children].indexOf(th);
const rows=[...t.tBodies[0].rows],asc=th.dataset.asc!=='1';th.dataset.asc=asc?'1':'0';
const key=r=>{const s=r.cells[i].dataset.v??r.cells[i].textContent;const n=parseFloat(s);
return isNaN(n)?s:n};rows.sort((a,b)=>{const x=key(a),y=key(b);
return (x<y?-1:x>y?1:0)*(asc?1:-1)});rows.forEach(r=>t.tBodies[0].appendChild(r));}
document.querySelectorAll('table.sortable th').forEach(th=>th.addEventListener('click',
()=>sortTable(th)));
"""


KEY = ("<h2>Max ulp error per implementation and dtype, at a glance</h2>"
       '<p class="key"><span style="background:#1a9850">✓ correctly rounded</span>'
       '<span style="background:rgb(153,217,80)">≤1 faithful</span>'
       '<span style="background:rgb(255,38,80)">! worse (darker: more ulps, log '
       'scale)</span><span style="background:#7f0000;color:#fff">∞ inf or NaN'
       '</span><span style="background:#999">✗ error</span></p>')


def _png(fig) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=80)
    import matplotlib.pyplot as plt

    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


def _img(src: str, alt: str) -> str:
    return f'<img src="{src}" alt="{html.escape(alt)}">'


def figure_html(fig, alt: str) -> str:
    """A matplotlib figure as an embedded image of the page (for sections from elsewhere,
    such as a study's)."""
    return _img(_png(fig), alt)


def _ticks(ax, lo: float, hi: float) -> None:
    """x ticks at 0 and ±10^k on the asinh axis (every d-th power, so at most ~16 ticks),
    labelled with x itself."""
    top = max(abs(lo), abs(hi))
    powers = [k for k in range(-2, 309) if transform(10.0**k) <= top]
    every = max(1, -(-len(powers) // 8))
    values = [0.0] + [s * 10.0**k for k in powers[::every] for s in (1, -1)]
    shown = sorted(v for v in values if lo <= transform(v) <= hi)
    ax.set_xticks([float(transform(v)) for v in shown])
    ax.set_xticklabels([f"{v:g}" for v in shown], rotation=45, fontsize=7)


def _quiet(draw):
    """matplotlib warns of huge values on log axes (1e297 ulps): they are the data."""
    def quiet(*args, **kwargs):
        with np.errstate(all="ignore"):
            return draw(*args, **kwargs)
    return quiet


FLOOR = 1e-3  # ulps: below a thousandth of an ulp nothing is worth seeing


@_quiet
def ulp_figure(results: list[AccuracyResult], title: str) -> str:
    """ulp error against x, small multiples: one panel per backend (its implementations
    overlaid), all on one asinh x axis (linear near 0, log in the tails) and one log y axis, so
    panels compare at a glance. In each: region boundaries, the 0.5 ulp line, each worst input
    starred and named in the legend outside the data (labels on the plot piled on each
    other); infinite errors (a NaN or inf where the function is finite) in a band of their own
    above the panel, one row per implementation, so they neither stretch the axis nor hide
    among the finite ones."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    families: dict[str, list] = {}
    top, lo, hi = 1.0, math.inf, -math.inf
    for r in results:
        p = r.profile or {"x": [], "max_ulp": []}
        x, e = np.array(p["x"], dtype=float), np.array(p["max_ulp"], dtype=float)
        families.setdefault(r.identity.backend, []).append((r, x, e))
        finite = np.isfinite(e)
        if finite.any():
            top = max(top, float(e[finite].max()))
        if x.size:
            lo, hi = min(lo, float(transform(x).min())), max(hi, float(transform(x).max()))
    top = min(top, 1e250)  # log ticks overflow near 1e300
    n = max(len(families), 1)
    fig, axes = plt.subplots(2 * n, 1, figsize=(12, 0.6 + 3.2 * n), sharex=True,
                             layout="constrained", squeeze=False,
                             gridspec_kw={"height_ratios": [1, 6] * n})
    for k, (backend, members) in enumerate(families.items()):
        band, ax = axes[2 * k][0], axes[2 * k + 1][0]
        infinite = False
        for row, (r, x, e) in enumerate(members):
            if not x.size:
                continue
            t, finite, f = transform(x), np.isfinite(e), r.figures
            # errors below the axis floor (0 among them, which a log axis drops) drawn on it
            (line,) = ax.plot(t[finite], np.maximum(e[finite], FLOOR), ".", ms=3,
                              label=f"{r.identity.id}: max {tables.fmt_max(f)} at x = "
                                    f"{f.worst_input:.4g}")
            if (~finite).any():
                infinite = True
                band.plot(t[~finite], np.full((~finite).sum(), row), "|", ms=7,
                          color=line.get_color())
            if math.isfinite(f.max_ulp):
                ax.plot(transform(f.worst_input), f.max_ulp, "*", ms=12,
                        color=line.get_color(), markeredgecolor="k")
        for axis in (ax, band):
            for _, boundary, _ in REGIONS[1:]:
                axis.axvline(float(transform(boundary)), color="#bbb", lw=0.7, ls=":")
        ax.axhline(0.5, color="grey", lw=0.8, ls="--", label="0.5 ulp (correctly rounded)")
        ax.set_yscale("log")
        ax.set_ylim(FLOOR / 2, top * 4)
        ax.set_ylabel("ulp error", fontsize=9)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0,
                  title=backend, title_fontsize=8)
        band.set_yticks([])
        band.set_ylim(-0.5, max(len(members) - 0.5, 0.5))
        band.set_ylabel("inf/NaN", rotation=0, ha="right", va="center", fontsize=7)
        if not infinite:
            band.text(0.5, 0.5, "no infinite error", transform=band.transAxes, ha="center",
                      va="center", fontsize=7, color="grey")
    if math.isfinite(lo):
        _ticks(axes[-1][0], lo, hi)
    axes[-1][0].set_xlabel(f"x  (asinh(x/{SCALE:g}) axis: linear near 0, logarithmic in the "
                           f"tails); below {FLOOR:g} ulp: on the floor")
    fig.suptitle(title)
    return _png(fig)


@_quiet
def minimum_figure(results: list[AccuracyResult], title: str) -> str:
    """GELU near its minimum, one panel per dtype: the curve f(x) - f(x*) ≈ f″(x*)(x - x*)²/2
    against x - x*, and each implementation's plateau of smallest outputs drawn at its value
    - so a plateau off 0 (beside x*) or above/below the curve's floor shows at a glance."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    found = [(r, r.minimum) for r in results if isinstance(r.minimum, MinimumFinding)]
    dtypes = [d for d in FORMATS if any(r.identity.dtype == d for r, _ in found)]
    columns = min(max(len(dtypes), 1), 2)  # panels of a readable size: two to a row
    rows = -(-max(len(dtypes), 1) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(12, 4.6 * rows), squeeze=False,
                             layout="constrained")
    for ax in axes.flat[len(dtypes):]:
        ax.set_visible(False)
    for ax, dtype in zip(axes.flat, dtypes):
        here = [(r, m) for r, m in found if r.identity.dtype == dtype]
        x_star, v_star = here[0][1].x_star, here[0][1].exact_value
        curvature = get_function(here[0][0].identity.function).curvature
        assert curvature is not None  # (a function with a minimum)
        width = max(max(abs(m.plateau_lo - x_star), abs(m.plateau_hi - x_star))
                    for _, m in here) * 1.6 or 1e-3
        h = np.linspace(-width, width, 201)
        ax.plot(h, curvature / 2 * h * h, color="k", lw=0.8, label="f(x) - f(x*)")
        for r, m in here:
            ax.plot([m.plateau_lo - x_star, m.plateau_hi - x_star],
                    [m.value - v_star] * 2, lw=4, solid_capstyle="butt", alpha=0.7,
                    label=f"{r.identity.id} ({m.value_ulp_error:.2g} ulp"
                          + ("" if m.true_argmin_on_plateau else ", x* off it") + ")")
        ax.axvline(0, color="grey", lw=0.8, ls="--")
        ax.axhline(0, color="grey", lw=0.8, ls=":")
        top = curvature / 2 * width * width  # plateaus far above the curve are cut off
        low = min(0.0, *(m.value - v_star for _, m in here))
        ax.set_ylim(low - 0.15 * top, top * 1.15)
        ax.set_title(dtype, fontsize=10)
        ax.set_xlabel("x - x*", fontsize=9)
        ax.set_ylabel("output - f(x*)", fontsize=9)
        ax.tick_params(labelsize=8)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0)
    fig.suptitle(f"{title}: x* = {found[0][1].x_star:.17g}, f(x*) = "
                 f"{found[0][1].exact_value:.17g}" if found else title, fontsize=10)
    return _png(fig)


@_quiet
def histogram_figure(result: SweepResult) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    assert result.histogram is not None and result.figures is not None  # (a measured sweep)
    counts = np.array(result.histogram["counts"], dtype=np.float64)
    labels = ["<=0.5", "(0.5,1)"] + [f"2^{k - 2}" for k in range(2, len(counts) - 1)] + ["inf"]
    fig, ax = plt.subplots(figsize=(11, 3))
    ax.bar(range(len(counts)), np.where(counts > 0, counts, np.nan), color="#4477aa")
    ax.set_yscale("log")
    ax.set_xticks(range(len(counts)))
    ax.set_xticklabels(labels, rotation=90, fontsize=7)
    ax.set_ylabel("inputs")
    ax.set_title(f"{result.label}: distribution of ulp errors over "
                 f"{result.figures.n_inputs:,} inputs")
    fig.tight_layout()
    return _png(fig)


def _class(result: AccuracyResult | None) -> tuple[str, str, str]:
    """(symbol, text, colour) of a heatmap cell - the symbol tells it without colour."""
    if result is None:
        return "", "", "#fff"
    if result.failure:
        return "✗", "error", "#999"
    f = result.figures
    if f is None:
        return "?", "not measured", "#fff"
    if not math.isfinite(f.max_ulp) or result.all_nan:
        return "∞", "inf or NaN", "#7f0000"
    if f.max_ulp <= 0.5 and not f.not_correctly_rounded:
        return "✓", "correctly rounded", "#1a9850"
    level = min(1.0, math.log2(max(f.max_ulp, 1)) / 24)
    colour = f"rgb({int(255 * (0.6 + 0.4 * level))},{int(255 * (0.85 - 0.7 * level))},80)"
    return ("≤1" if f.max_ulp <= 1 else "!"), tables.fmt_max(f), colour


def heatmap(results: list[AccuracyResult], function: str) -> str:
    rows: dict[str, dict] = {}
    for r in results:
        if r.identity.function == function:
            rows.setdefault(r.identity.id, {})[r.identity.dtype] = r
    dtypes = [d for d in FORMATS if any(d in by for by in rows.values())]
    head = "".join(f"<th>{d}</th>" for d in dtypes)
    body = []
    for impl, by in rows.items():
        cells = []
        for d in dtypes:
            symbol, text, colour = _class(by.get(d))
            ink = "#fff" if colour in ("#7f0000", "#999") else "#000"
            cells.append(f'<td style="background:{colour};color:{ink}" '
                         f'title="{html.escape(text)}">{symbol} {html.escape(text)}</td>')
        body.append(f"<tr><th>{html.escape(impl)}</th>{''.join(cells)}</tr>")
    return (f'<table class="heat"><thead><tr><th>{html.escape(function)}</th>{head}</tr>'
            f"</thead><tbody>{''.join(body)}</tbody></table>")


def table_html(header: list[str], body: list[list]) -> str:
    def cell(value) -> str:
        text = str(value)
        try:
            number = float(text.replace(",", "").split(" ")[0])
            return f'<td class="num" data-v="{number}">{html.escape(text)}</td>'
        except ValueError:
            return f"<td>{html.escape(text)}</td>"

    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    rows = "".join("<tr>" + "".join(cell(c) for c in row) + "</tr>" for row in body)
    return (f'<table class="sortable"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody>'
            "</table>")


def render(reports: list[tuple[str, list, dict | None]],
           compare_sections: list[tuple[str, dict]] | None = None,
           extra: list[str] | None = None, budgets=None) -> str:
    """The page for one or more (name, results, environment) reports; with several, each
    implementation is labelled with its report's name, so they sit side by side. ``extra``:
    further sections (HTML), such as a study's, placed after the accuracy figures; the summary
    stands against ``budgets`` (gelucheck's own where None)."""
    results, environments = [], []
    for name, rs, env in reports:
        if len(reports) > 1:
            rs = [_relabel(r, name) for r in rs]
        results += rs
        if env:
            environments.append((name, env))
    accuracy = [r for r in results if isinstance(r, AccuracyResult) and r.figures]
    parts = ["<h1>gelucheck accuracy report</h1>",
             f'<p class="env">rendered {datetime.now(UTC):%Y-%m-%d %H:%M UTC}</p>']
    for name, env in environments:
        parts.append(f'<p class="env"><b>{html.escape(name)}</b>: '
                     f"{html.escape(one_line(env))}</p>")
    functions = list(dict.fromkeys(r.identity.function for r in accuracy))
    if accuracy:  # the summary the terminal and the Markdown open with (report.summary)
        from .. import budgets as budgets_mod
        from . import summary

        against = budgets if budgets is not None else budgets_mod.load()
        parts.append(f"<h2>{html.escape(summary.TITLE)}</h2>"
                     + table_html(*summary.rows(results, against)))
        parts.append(KEY)
    parts += [heatmap(accuracy, f) for f in functions]
    if accuracy:
        parts.append("<h2>Ulp error against x</h2>")
    for function in functions:
        for dtype in FORMATS:
            group = [r for r in accuracy if r.identity.function == function
                     and r.identity.dtype == dtype]
            if group:
                parts.append(f"<details open><summary>{function} {dtype}</summary>"
                             + _img(ulp_figure(group, f"{function} {dtype}"),
                                    f"ulp error of {function} in {dtype}") + "</details>")
    gelus = [r for r in accuracy if isinstance(r.minimum, MinimumFinding)]
    if gelus:
        parts.append("<h2>GELU near its minimum</h2>")
        for function in dict.fromkeys(r.identity.function for r in gelus):
            group = [r for r in gelus if r.identity.function == function]
            parts.append(_img(minimum_figure(group, f"{function}: plateaus around x*"),
                              f"minimum of {function}"))
    for r in results:
        if isinstance(r, SweepResult) and r.histogram and r.figures:
            parts.append(f"<h2>{html.escape(r.label)}</h2>" + _img(histogram_figure(r),
                                                                   r.label))
    for title, (header, body) in tables.sections(results):
        if body and not title.startswith("Max / mean"):
            parts.append(f"<h2>{html.escape(title)}</h2>" + table_html(header, body))
    overall = tables.accuracy_rows(results)
    if overall[1]:
        parts.append("<h2>Max / mean ulp error (the mean of the finite errors)</h2>"
                     + table_html(*overall))
    parts += extra or []
    for title, diff in compare_sections or []:
        parts.append(f"<h2>{html.escape(title)}</h2>")
        for key, label in compare.TITLES.items():
            if diff[key]:
                items = "".join(f"<li>{html.escape(line)}</li>" for line in diff[key])
                parts.append(f"<details open><summary>{label} ({len(diff[key])})</summary>"
                             f"<ul>{items}</ul></details>")
        if not any(diff.values()):
            parts.append("<p>No differences.</p>")
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
            "<title>gelucheck accuracy report</title>"
            f"<style>{STYLE}</style></head><body>{''.join(parts)}"
            f"<script>{SCRIPT}{SELFCHECK}</script></body></html>")


def _relabel(result, name: str):
    """The same result with its implementation named after its report (side by side)."""
    from dataclasses import replace

    if isinstance(result, DriftResult):
        return replace(result, backend=f"{name}/{result.backend}")
    if isinstance(result, (AccuracyResult, SweepResult, ConsistencyResult)):
        return replace(result, identity=replace(result.identity,
                                                backend=f"{name}/{result.identity.backend}"))
    return result

"""How the studies' figures read in their tables: mean ± sd, confidence intervals, p-values,
the share of a loss won back, and the tables under a heading - one place for the moons and
the ViT study."""
from __future__ import annotations

from ..report import tables


def mean_sd(s: dict, scale: float = 1.0, digits: int = 2) -> str:
    return f"{s['mean'] * scale:.{digits}f} ± {s['sd'] * scale:.{digits}f}"


def interval(s: dict, scale: float = 1.0, digits: int = 2) -> str:
    lo, hi = s["ci95"]
    return f"[{lo * scale:.{digits}f}, {hi * scale:.{digits}f}]"


def p_value(value) -> str:
    return "- (all equal)" if value is None else f"{value:.3g}"


def won_back(r: dict) -> str:
    closed = r["gap_closed"]
    return f"{closed['mean'] * 100:.0f}% {interval(closed, 100, 0)}"


def render_sections(head: str, parts: list[tuple[str, list[str], list[list]]],
                    style: str = "plain") -> str:
    """A study's tables as text or Markdown, under its heading (a table with no rows is left
    out; titles wrapped to the report's width)."""
    out = [head]
    for title, header, body in parts:
        if not body:
            continue
        if style == "markdown":
            out.append(f"### {title}\n\n{tables.markdown(header, body)}")
        else:
            out.append(f"{tables.wrapped(title)}\n{tables.plain(header, body)}")
    return "\n\n".join(out) + "\n"


def html_sections(title: str, head: str, parts: list[tuple[str, list[str], list[list]]],
                  figures) -> str:
    """A study as a section of the HTML report: its title and heading, its tables (one with
    no rows left out), its figures."""
    import html

    from ..report.html import figure_html, table_html

    out = [f"<h2>{html.escape(title)}</h2>", f"<p>{html.escape(head)}</p>"]
    out += [f"<h3>{html.escape(t)}</h3>" + table_html(header, body)
            for t, header, body in parts if body]
    out += [figure_html(fig, name) for name, fig in figures]
    return "".join(out)

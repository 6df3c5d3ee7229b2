"""How the studies' figures read in their tables: mean ± sd, confidence intervals, p-values,
the share of a loss won back - one place for the moons and the ViT study."""
from __future__ import annotations


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

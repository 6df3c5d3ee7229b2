"""How a figure reads in every table, text, Markdown or HTML: ulps with their digits, "0.5+"
for a near-tie rounded the wrong way, "not measured", and "-" for a dtype not taken."""
from __future__ import annotations

import math

NOT_TAKEN = "-"  # a dtype the implementation does not take (said in the legend)


def fmt_ulp(value) -> str:
    if value is None:  # a figure that was not measured: said, never shown as 0 or blank
        return "not measured"
    if isinstance(value, str):
        value = float(value)
    if math.isinf(value):
        return "inf"
    if value == 0:
        return "0"
    if value < 10:
        return f"{value:.3g}"
    return f"{value:.3g}" if value < 1e5 else f"{value:.2e}"


def fmt_share(count: int, total: int, digits: int = 1) -> str:
    """``count`` of ``total`` as a percentage that never reads as none or all when it is
    neither: one in a million is "0.1%" at one digit, not "0.0%"."""
    if total == 0:
        return "not measured"
    if count in (0, total):
        return "0%" if count == 0 else "100%"
    step = 10.0**-digits
    return f"{min(max(100 * count / total, step), 100 - step):.{digits}f}%"


def fmt_max(figures) -> str:
    """The max ulp error; "0.5+" where it reads 0.5 yet some result is not correctly rounded
    (an exact value a hair beyond a tie: its excess is below float64's resolution)."""
    if figures.max_ulp <= 0.5 and figures.not_correctly_rounded:
        return "0.5+"
    return fmt_ulp(figures.max_ulp)

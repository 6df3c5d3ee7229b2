"""Plots of ulp error against x, one PNG per implementation and dtype (the ``plots`` extra),
drawn from the profile each result carries - the same figure as the HTML report's - never by
measuring again."""
from __future__ import annotations

import base64
from pathlib import Path

from ..results import AccuracyResult


def available() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def plot(result: AccuracyResult, directory: Path) -> Path | None:
    """The plot of one measured result; None for one that could not be measured."""
    if result.figures is None or result.profile is None:
        return None
    from .html import ulp_figure

    ident = result.identity
    uri = ulp_figure([result], f"{ident.id} {ident.function} {ident.dtype} ({result.how})")
    directory.mkdir(parents=True, exist_ok=True)
    name = f"{ident.backend}_{ident.implementation}_{ident.function}_{ident.dtype}"
    path = directory / (name.replace("*", "x").replace(":", "_").replace("/", "_") + ".png")
    path.write_bytes(base64.b64decode(uri.split(",", 1)[1]))
    return path

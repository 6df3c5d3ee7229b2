"""Plots of ulp error against x, one PNG per implementation and dtype (the ``plots`` extra),
drawn from the errors a measurement kept, never by measuring again."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..checks import data
from ..formats import get_format
from ..results import AccuracyResult


def available() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def plot(result: AccuracyResult, directory: Path) -> Path | None:
    """The plot of one result that kept its per-input errors; None for one that has none."""
    if result.errors is None:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ident = result.identity
    x = data.table(get_format(ident.dtype)).x.astype(np.float64)
    err = result.errors
    keep = np.abs(x) <= 20  # beyond, every function has saturated: nothing to see
    x, err = x[keep], err[keep]
    shown = np.where(np.isfinite(err), err, np.nan)
    fig, ax = plt.subplots(figsize=(9, 4))
    ax.scatter(x, np.maximum(shown, 1e-3), s=1, alpha=0.5, rasterized=True)
    bad = ~np.isfinite(err)
    if bad.any():
        ax.scatter(x[bad], np.full(bad.sum(), np.nanmax(np.append(shown, 1)) * 2), s=4,
                   color="red", label="inf or NaN")
        ax.legend(loc="upper right")
    ax.axhline(0.5, color="grey", lw=0.8, ls="--")
    ax.set_yscale("log")
    ax.set_xlabel("x")
    ax.set_ylabel("ulp error")
    ax.set_title(f"{ident.id} {ident.function} {ident.dtype} ({result.how})")
    directory.mkdir(parents=True, exist_ok=True)
    name = f"{ident.backend}_{ident.implementation}_{ident.function}_{ident.dtype}"
    path = directory / (name.replace("*", "x").replace(":", "_").replace("/", "_") + ".png")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path

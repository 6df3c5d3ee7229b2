"""Plots of ulp error against x, one PNG per implementation and dtype (the ``plots`` extra)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..backends import Implementation, ImplementationError
from ..checks.accuracy import errors_against_x


def available() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def plot(impl: Implementation, dtype: str, directory: Path) -> Path | None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    try:
        x, err = errors_against_x(impl, dtype)
    except ImplementationError:
        return None
    x = x.astype(np.float64)
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
    ax.set_title(f"{impl.id} {impl.function} {dtype} ({impl.how(dtype)})")
    directory.mkdir(parents=True, exist_ok=True)
    name = f"{impl.backend}_{impl.name}_{impl.function}_{dtype}".replace("*", "x")
    path = directory / (name.replace(":", "_").replace("/", "_") + ".png")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path

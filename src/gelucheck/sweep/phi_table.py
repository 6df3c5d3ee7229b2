"""The coefficient tables of the compiled sweep reference (sweep/kernels.py), per interval of
1/4 of -|x|, in u = 8·(x - centre), highest first: mpmath's Chebyshev fits at 40 digits.

- R = Φ/φ, degree 11, on 80 intervals down to x = -20 (the far left): error below 2^-63 of
  R. phi_block multiplies it by φ = exp(-x²/2)/√(2π), computed alongside.
- Φ itself, degree 13, on the 36 intervals down to x = -9 (saturation): error below 2^-64 of
  Φ down to -5 (DIRECT_LEFT), and absolute below 2^-86 beyond, where it serves only
  1 - Φ(-x) for x > 0. phi_direct needs no exponential: twice as fast where it serves
  (docs/design.md, The sweep).
- erf(|x|), degree 13, on the 24 intervals up to |x| = 6 (ERF_FAR): error below 2^-67 of
  erf from |x| = 1/8 on, where it serves erf's sweep instead of the C library's scalar
  calls (erf_kernels.erf_fit_block; docs/design.md, The sweep of erf and erfc).
- the tanh form's σ(2u) = GELU_tanh(x)/x, degree 13, on the 24 intervals down to x = -6:
  error below 2^-60 of it down to -5 (TANH_DIRECT_LEFT), where phi_direct computes the
  tanh form from it as GELU's from Φ's (x·σ for x < 0, x·(1 - σ(-x)) above 0, up to 6),
  instead of the exponential and a division.

Fitting takes seconds, so the rows are stored in data/ with a digest (rewritten by
scripts/fit-phi-rows.py) and checked on load."""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import mpmath
import numpy as np

from ..errors import ReferenceDataError
from ..reference import mpformulas

INTERVAL = 0.25
DATA = Path(__file__).resolve().parents[1] / "data"


def centre(k: int) -> float:
    return -(k + 0.5) * INTERVAL


def interval(x: float) -> int:
    """The interval of -|x| (the last of R's beyond it)."""
    return min(int(abs(x) / INTERVAL), R.intervals - 1)


def _digest(rows: list[list[str]]) -> str:
    return hashlib.sha256(json.dumps(rows).encode()).hexdigest()


@dataclass(frozen=True)
class Table:
    """One function's fits: ``terms`` coefficients on each of ``intervals`` intervals."""

    path: Path
    terms: int
    intervals: int
    function: Callable  # of an mpmath x

    def fit_row(self, k: int) -> list[float]:
        """The coefficients on [-(k+1)/4, -k/4] in u = 8·(x - centre(k)), highest first."""
        c = centre(k)
        with mpmath.workdps(40):
            return [float(a) for a in mpmath.chebyfit(
                lambda u: self.function(c + u * INTERVAL / 2), [-1, 1], self.terms)]

    def write(self, path: Path | None = None) -> None:
        rows = [[c.hex() for c in self.fit_row(k)] for k in range(self.intervals)]
        (path or self.path).write_text(json.dumps(
            {"interval": INTERVAL, "terms": self.terms, "rows": rows, "sha256": _digest(rows)},
            indent=1) + "\n")

    def rows(self, path: Path | None = None) -> np.ndarray:
        """The (intervals, terms) coefficients, checked against their digest and shape."""
        return _load(path or self.path, self.terms, self.intervals)


@cache
def _load(path: Path, terms: int, intervals: int) -> np.ndarray:
    try:
        data = json.loads(path.read_text())
        table = np.array([[float.fromhex(c) for c in row] for row in data["rows"]])
        ok = (data["sha256"] == _digest(data["rows"]) and data["interval"] == INTERVAL
              and table.shape == (intervals, terms) and np.isfinite(table).all())
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ReferenceDataError(f"{path}: unreadable ({exc}); rewrite it with "
                                 "scripts/fit-phi-rows.py") from exc
    if not ok:
        raise ReferenceDataError(f"{path}: damaged (digest, interval or shape differs); "
                                 "rewrite it with scripts/fit-phi-rows.py")
    return table


R = Table(DATA / "phi_rows.json", 12, 80, lambda x: mpmath.ncdf(x) / mpmath.npdf(x))
PHI = Table(DATA / "phi_direct_rows.json", 14, 36, mpmath.ncdf)
ERF = Table(DATA / "erf_rows.json", 14, 24, lambda x: mpmath.erf(-x))  # erf(|x|) at x = -|x|
TANH = Table(DATA / "gelu_tanh_rows.json", 14, 24, mpformulas.tanh_sigma)
TABLES = (R, PHI, ERF, TANH)

# phi_direct serves x < 0 down to here: below, Φ's fit drifts from Φ relative to its size
# (2^-64 down to -5, 2^-56 at -6.75)
DIRECT_LEFT = 5.0
# phi_direct serves the tanh form for x < 0 down to here (TANH's fit, as DIRECT_LEFT: 2^-60
# of σ down to -5, 2^-50 at -6)
TANH_DIRECT_LEFT = 5.0

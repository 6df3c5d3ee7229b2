"""The coefficients of R = Φ/φ on each interval of 1/4 of -|x| down to -20, for the compiled
sweep reference (sweep/kernels.py): mpmath's Chebyshev fits at 40 digits, degree 11 in
u = 8·(x - centre), error below 2^-63 of R. Fitting all 80 takes ~3 s, so they are stored in
data/phi_rows.json with a digest (rewritten by scripts/fit-phi-rows.py) and checked on load."""
from __future__ import annotations

import hashlib
import json
from functools import cache
from pathlib import Path

import mpmath
import numpy as np

from ..errors import ReferenceDataError

INTERVAL = 0.25
INTERVALS = 80  # down to x = -20, the far left
TERMS = 12  # degree 11
ROWS_FILE = Path(__file__).resolve().parents[1] / "data" / "phi_rows.json"


def fit_row(k: int) -> list[float]:
    """R's coefficients on [-(k+1)/4, -k/4] in u = 8·(x - centre(k)), highest first."""
    c = centre(k)
    with mpmath.workdps(40):
        def r(u):
            x = c + u * INTERVAL / 2
            return mpmath.ncdf(x) / mpmath.npdf(x)

        return [float(a) for a in mpmath.chebyfit(r, [-1, 1], TERMS)]


def centre(k: int) -> float:
    return -(k + 0.5) * INTERVAL


def interval(x: float) -> int:
    """The interval of -|x|."""
    return min(int(abs(x) / INTERVAL), INTERVALS - 1)


def _digest(rows: list[list[str]]) -> str:
    return hashlib.sha256(json.dumps(rows).encode()).hexdigest()


def write_rows(path: Path = ROWS_FILE) -> None:
    rows = [[c.hex() for c in fit_row(k)] for k in range(INTERVALS)]
    path.write_text(json.dumps({"interval": INTERVAL, "terms": TERMS, "rows": rows,
                                "sha256": _digest(rows)}, indent=1) + "\n")


@cache
def rows(path: Path = ROWS_FILE) -> np.ndarray:
    """The (INTERVALS, TERMS) coefficients, checked against their digest and shape."""
    try:
        data = json.loads(path.read_text())
        table = np.array([[float.fromhex(c) for c in row] for row in data["rows"]])
        ok = (data["sha256"] == _digest(data["rows"]) and data["interval"] == INTERVAL
              and table.shape == (INTERVALS, TERMS) and np.isfinite(table).all())
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ReferenceDataError(f"{path}: unreadable ({exc}); rewrite it with "
                                 "scripts/fit-phi-rows.py") from exc
    if not ok:
        raise ReferenceDataError(f"{path}: damaged (digest, interval or shape differs); "
                                 "rewrite it with scripts/fit-phi-rows.py")
    return table

"""Documented accuracy bounds (``data/published_bounds.toml``): what a library promises, to be
shown next to what gelucheck measures (report.tables, report.jsonio), and where a measurement
exceeds a promise."""
from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources

import tomllib

from .errors import GelucheckError
from .formats import FORMATS
from .functions import FUNCTIONS
from .results import AccuracyResult

FILE = "published_bounds.toml"


@dataclass(frozen=True)
class Bound:
    function: str
    dtype: str
    max_ulp: float
    library: str
    source: str
    backend: str | None = None
    implementations: tuple[str, ...] = ()
    note: str = ""

    def covers(self, result: AccuracyResult) -> bool:
        i = result.identity
        return (self.backend == i.backend and i.implementation in self.implementations
                and self.function == i.function and self.dtype == i.dtype)

    def exceeded_by(self, result: AccuracyResult) -> bool:
        """Whether the measured max ulp of a result it covers is above this bound."""
        assert result.figures is not None  # (only a measured result is compared)
        return result.figures.max_ulp > self.max_ulp


@cache
def bounds() -> tuple[Bound, ...]:
    """Every documented bound; a malformed entry is refused, the file named."""
    path = resources.files("gelucheck") / "data" / FILE
    try:
        rows = tomllib.loads(path.read_text())["bound"]
        out = tuple(Bound(**{**row, "implementations": tuple(row.get("implementations", ()))})
                    for row in rows)
    except (KeyError, TypeError, tomllib.TOMLDecodeError) as exc:
        raise GelucheckError(f"{path}: not a list of [[bound]] entries ({exc})") from None
    for b in out:
        if b.function not in FUNCTIONS or b.dtype not in FORMATS or not b.max_ulp > 0:
            raise GelucheckError(f"{path}: a bound names an unknown function or dtype, or a "
                                 f"max_ulp that is not positive: {b}")
    return out


def bound_for(result: AccuracyResult) -> Bound | None:
    return next((b for b in bounds() if b.covers(result)), None)


"""The cells the float64 search takes whole before it descends: around the landmarks of
``data/search_landmarks.toml`` (implementations' seams, the function's changes of regime)
and at both edges of the binades where functions change (|x| from 2^-10 to 2^7) and of the
extreme ones (the subnormals, the smallest normals, the largest doubles, where overflow
lurks)."""
from __future__ import annotations

import tomllib
from functools import cache
from importlib import resources

from ..errors import GelucheckError
from ..functions import Function
from .cells import BINADES, FRACTION_BITS, Cell

FILE = "search_landmarks.toml"
LEVEL = FRACTION_BITS - 11  # cells of 2^11 encodings
BIAS = 1023
MIDDLE = range(BIAS - 10, BIAS + 7)  # |x| from 2^-10 to 2^7: where the functions change
EDGE_BINADES = [0, 1, *MIDDLE, BINADES - 1]


@cache
def _table() -> list[dict]:
    path = resources.files("gelucheck") / "data" / FILE
    try:
        entries = tomllib.loads(path.read_text())["landmark"]
        for entry in entries:
            entry["x"] = [float(v) for v in entry["x"]]
            if not (entry["functions"] and isinstance(entry["why"], str)):
                raise ValueError("each landmark needs its functions and why")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise GelucheckError(f"{path}: damaged ({exc})") from None
    return entries


def points(function: Function) -> list[float]:
    return sorted({float(v) for e in _table() if function.name in e["functions"]
                   for v in e["x"]})


def _around(x: float) -> list[Cell]:
    cell = Cell.holding(x, LEVEL)
    return [cell, *cell.neighbours()]


def middle() -> list[Cell]:
    """The binades where the functions change, both signs."""
    return [Cell(sign, b, 0, 0) for sign in (0, 1) for b in MIDDLE]


def cells(function: Function) -> list[Cell]:
    """Every landmark's cell with its neighbours, and the binades' edge cells, in order."""
    last = (1 << LEVEL) - 1
    found = {c for x in points(function) for c in _around(x)}
    found |= {Cell(sign, b, LEVEL, i) for sign in (0, 1) for b in EDGE_BINADES
              for i in (0, last)}
    return sorted(found)

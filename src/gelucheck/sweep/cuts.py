"""Where a block's sorted inputs cross edges (of regions, of a reference's pieces, of a table's
intervals): np.searchsorted with the edges in the inputs' own dtype. Given float64 edges,
searchsorted converts the whole float32 block to float64 first - a pass over the block as
long as a comparison pass, for a few binary searches."""
from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Literal

import numpy as np

Side = Literal["left", "right"]


def in_dtype(edges: Sequence[float], dtype: np.dtype, side: Side = "left") -> np.ndarray:
    """The edges as values of ``dtype`` that cut a sorted array of that dtype where the
    exact edges do: rounded up for side "left" (the count of x < e), down for "right" (of
    x <= e) - no value of the dtype lies between an edge and its rounding that way."""
    exact = np.asarray(edges, dtype=np.float64)
    with np.errstate(over="ignore"):  # beyond the dtype: its infinity, then rounded back
        out = exact.astype(dtype)
    if side == "left":
        low = out < exact
        out[low] = np.nextafter(out[low], np.inf)
    elif side == "right":
        high = out > exact
        out[high] = np.nextafter(out[high], -np.inf)
    else:
        raise ValueError(f"side is 'left' or 'right', not {side!r}")
    return out


@lru_cache(maxsize=256)
def _edges_in(edges: tuple[float, ...], dtype: np.dtype, side: Side) -> np.ndarray:
    """in_dtype, read-only, made once per set of edges: a block's few searches cost less
    than converting the edges each time."""
    out = in_dtype(edges, dtype, side)
    out.flags.writeable = False
    return out


def sorted_cuts(x: np.ndarray, edges: Sequence[float], side: Side = "left") -> list[int]:
    """np.searchsorted(x, edges, side) for an ascending x (a reversed view is searched as it
    is, without a copy)."""
    return np.searchsorted(x, _edges_in(tuple(edges), x.dtype, side), side).tolist()


def value_parts(x: np.ndarray, edges: Sequence[float]) -> list[tuple[int, int]]:
    """The positions [a, b), in x's own order, of the len(edges) + 1 parts of a monotone run
    in either order (a block of negative encodings descends) between ascending edges: part
    k holds edges[k - 1] <= x < edges[k]."""
    n = len(x)
    descending = n > 1 and x[0] > x[-1]
    cuts = sorted_cuts(x[::-1] if descending else x, edges)  # ascending either way (a view)
    parts = list(zip([0, *cuts], [*cuts, n]))
    return [(n - b, n - a) for a, b in parts] if descending else parts


def magnitude_ascends(x: np.ndarray) -> bool:
    """Whether |x| ascends along a monotone run of one sign (or has one element)."""
    return abs(float(x[0])) <= abs(float(x[-1]))


def magnitude_cuts(x: np.ndarray, edges: Sequence[float]) -> list[int]:
    """Where a monotone run of one sign, in either order, crosses each edge of |x|
    (ascending): the index of its first input with |x| >= edge where |x| ascends along x
    (magnitude_ascends), else of its first with |x| < edge, for the edges from the highest:
    the positions, ascending, that split it into runs between consecutive edges."""
    n, negative = len(x), bool(x[0] < 0 or x[-1] < 0)
    if magnitude_ascends(x):
        if negative:  # x descends: |x| >= e where x <= -e, the last of x[::-1]'s ascending
            return [n - c for c in sorted_cuts(x[::-1], [-e for e in edges], "right")]
        return sorted_cuts(x, edges, "left")
    reverse = list(edges)[::-1]
    if negative:  # x ascends: |x| < e where x > -e
        return sorted_cuts(x, [-e for e in reverse], "right")
    return [n - c for c in sorted_cuts(x[::-1], reverse, "left")]  # x descends: x < e

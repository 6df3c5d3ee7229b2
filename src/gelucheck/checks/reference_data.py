"""The inputs and exact values a check measures against, loaded once per format."""
from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import numpy as np

from ..formats import Format, get_format
from ..functions import Function, get_function
from ..reference import store
from ..reference.mpref import Rounded
from ..reference.plans import InputPlan
from ..ulp import Exact


def table(fmt: str | Format, function: str | Function) -> store.Table:
    """The stored reference of ``fmt`` at the inputs of ``function``'s plan, with every
    function of that plan (from $GELUCHECK_REFERENCE when set), loaded and checked against
    its manifest once per folder."""
    return _table(get_format(fmt), get_function(function).inputs, store.default_directory())


@cache
def _table(fmt: Format, plan: InputPlan, directory) -> store.Table:
    return store.load(fmt, plan, directory)


def exact(tab: store.Table, function: str | Function) -> Exact:
    """What ulp_error takes as the exact value: (rounded, residual), in every format.

    Even for 16- and 32-bit formats a float64 is not enough near powers of two: Φ(-x) for
    tiny x is 1/2 - |x|φ(0), which float64 rounds to 1/2 when |x| < 2^-54, so ulp(v) taken
    from the float64 would be the binade above, twice too large. The residual knows the side.
    """
    function = get_function(function)  # (callers pass names too)
    return tab.derived(f"exact {function.name}", lambda: _shared(Exact(
        tab.rounded(function).astype(np.float64), tab.residual(function))))


def _shared(exact: Exact) -> Exact:
    """One Exact per stored function, read-only: every measurement at the table scores
    against it (and reads its ulps, computed once)."""
    for array in (exact.rounded, exact.residual):
        array.flags.writeable = False
    return exact


def exact_of(rounded: Rounded, fmt: Format) -> Exact:
    """What ulp_error takes for one value rounded on the spot (not from the stored data)."""
    return exacts_of([rounded], fmt)


def exacts_of(rounded: Sequence[Rounded], fmt: Format) -> Exact:
    """exact_of for values rounded on the spot, one after another (the search's)."""
    bits = np.array([r.bits for r in rounded], dtype=fmt.uint)
    return Exact(fmt.from_bits(bits).astype(np.float64), np.array([r.residual for r in rounded]))

"""The sweep's exact values, whichever function: the module the function's row names
(``Function.sweep_reference``) computes them through the SweepReference protocol - the Φ and
GELU family's ``fastref``, the erf family's ``erf_reference`` - and this module asks the row,
never the function's name (docs/design.md, Adding a function). Inputs whose float64 value the
module cannot decide go to the stored proofs, Arb or mpmath (proofs.resolve_all)."""
from __future__ import annotations

import importlib
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Protocol, cast

import numpy as np

from ..errors import UsageError
from ..functions import Function, get_function, sweepable
from . import loops, proof_table
from .proofs import resolve_all


class SweepError(UsageError):
    """A sweep that cannot run as asked, with the reason."""


@dataclass(frozen=True)
class SweepSpec:
    """Where one function's sweep splits x, and what its closed forms need (docs/design.md,
    The sweep): the facts a new sweepable function states once, in its reference module's
    SPECS."""

    far_left: float  # x <= far_left: the far left, where every result is the far value
    right_edge: float  # x > right_edge: the right part (1, 0, x itself, erf's limits)
    # |x| in [2^-124, known_tiny) within a binade: results and errors in closed form (0: no
    # such part), the exact value being the result + tiny_slope·x^tiny_power there
    known_tiny: float = 0.0
    tiny_slope: float = 0.0
    tiny_power: int = 0
    tiny_value: float = 0.5  # the result there where tiny_power is 1: Φ's and GELU′'s 1/2, erfc's 1
    taylor: float | None = None  # x·(1/2 + taylor·x) for |x| < 2^-30 (the GELU forms)
    # normal |x| below it: v, unit and doubt at m·2^e are those at m·2^e0 scaled, exactly
    # (0: no such part; sweep/replay.py); the results there lie near scaled_slope·x
    scaled_below: float = 0.0
    scaled_slope: float = 0.0
    # v, unit and doubt at -x are -v, unit and doubt at x, bit for bit (an odd function whose
    # loops work on |x| and copy the sign): an odd implementation's figures on a negative
    # block are then its positive block's, moved to the other sign (sweep/mirror.py)
    mirrored: bool = False


class SweepReference(Protocol):
    """What a function's sweep reference module provides, for the rows that name it."""

    FUNCTIONS: tuple[Function, ...]  # the rows it computes
    SPECS: Mapping[Function, SweepSpec]  # one for each

    def require(self, function: Function) -> None:
        """A clear error, before any work, where it cannot run here (a missing compiler, a C
        library beyond its proof)."""

    def fill(self, function: Function, x: np.ndarray, v: np.ndarray,
             unit: np.ndarray) -> np.ndarray:
        """v (float64, within relative_bound of the exact value) and unit (float32's ulp of the
        exact value) at ascending inputs x, in place; returns the indices in doubt."""

    def compiled_run(self, function: Function, x: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """(v, unit, doubt) of a monotone run of float32 inputs from one compiled loop, in
        x's own order; None where no loop takes the whole run (or without numba)."""

    def one_compiled_run(self, function: Function, a: float, b: float) -> bool:
        """Whether one loop of compiled_run computes a monotone run from a to b."""

    def relative_bound(self, function: Function) -> float:
        """The bound of v's error its proof gives, relative (docs/design.md, The sweep)."""

    def warm(self, functions: tuple[Function, ...]) -> None:
        """Its compiled loops for these functions made ready (compiled, or loaded from
        numba's disk cache) before any block is timed."""


@cache
def module_of(function: Function) -> SweepReference:
    """The reference module the row names; an error naming the reason where there is none."""
    function.require_sweep()
    name = f"gelucheck.sweep.{function.sweep_reference}"
    try:
        module = importlib.import_module(name)
    except ImportError as exc:
        raise SweepError(f"no exhaustive sweep of {function.name}: its row names {name}, "
                         f"which cannot be imported ({exc})") from None
    if function not in getattr(module, "FUNCTIONS", ()):
        raise SweepError(f"no exhaustive sweep of {function.name}: {name}, which its row names, "
                         "computes no reference for it (docs/design.md, Adding a function)")
    return cast(SweepReference, module)


@cache
def spec(function: Function) -> SweepSpec:
    """The function's sweep facts, as its reference module states them."""
    return module_of(function).SPECS[function]


def require(function: str | Function) -> None:
    """A clear error, before any work, where the function cannot be swept here: its row says
    why not, the module its row names computes no reference for it, or that module cannot
    here (erf's: no numba, or a C library beyond its bound); or the table of proven inputs
    is damaged."""
    function = get_function(function)
    module_of(function).require(function)
    proof_table.table()


_NONE = np.zeros(0, dtype=np.int64)  # no input to resolve


def values(function: str | Function, x: np.ndarray,
           monotone: bool = False) -> tuple[np.ndarray, np.ndarray, int]:
    """(v, unit, slow): float64 values of the function at float32 inputs, float32's ulp of
    the exact values, and how many inputs were resolved (the stored proofs, Arb or mpmath)
    because the fast value was uncertain.
    Fastest for a monotone x (a run of encodings of one sign: say so with ``monotone``, which
    skips the check); any order is accepted."""
    v, unit, slow = values_and_doubts(function, x, monotone)
    return v, unit, len(slow)


FEW = 8  # doubts a block has at most, mostly: found one by one (_doubts)


def _doubts(doubt: np.ndarray) -> np.ndarray:
    """np.flatnonzero(doubt) for a block's few doubts: each found by argmax, which stops at
    the first True (flatnonzero's count and fill passes cost as much as the block's
    resolving); flatnonzero itself past FEW."""
    found: list[int] = []
    at, n = 0, len(doubt)
    while at < n and len(found) < FEW:
        j = at + int(doubt[at:].argmax())
        if not doubt[j]:
            break
        found.append(j)
        at = j + 1
    else:
        if at < n:
            return np.flatnonzero(doubt)
    return np.array(found, dtype=np.int64) if found else _NONE


def values_and_doubts(function: str | Function, x: np.ndarray,
                      monotone: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """values, with the indices of the inputs resolved rather than their count."""
    function = get_function(function)
    module = module_of(function)
    if monotone and (block := module.compiled_run(function, x)) is not None:
        v, unit, doubt = block
        slow = _doubts(doubt)
        resolve_all(function, x, slow, v, unit)
        return v, unit, slow
    x64 = x.astype(np.float64)
    descending = len(x64) > 1 and x64[0] > x64[-1]
    order = None
    if descending:
        x64 = x64[::-1]
    if not monotone and len(x64) > 1 and not np.all(x64[1:] >= x64[:-1]):
        order = np.argsort(x64, kind="stable")
        x64 = x64[order]
    v = np.empty_like(x64)
    unit = np.empty_like(x64)
    slow = module.fill(function, x64, v, unit)
    resolve_all(function, x64, slow, v, unit)
    if order is not None:
        inverse = np.empty_like(order)
        inverse[order] = np.arange(len(order))
        v, unit = v[inverse], unit[inverse]
    if descending:
        # copied in x's order: the comparison's passes over a reversed view were slower
        v, unit = np.ascontiguousarray(v[::-1]), np.ascontiguousarray(unit[::-1])
    slow = order[slow] if order is not None else slow  # in x's own order
    return v, unit, np.sort(len(x64) - 1 - slow if descending else slow)


def proven(function: Function, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(v, unit) at float32 inputs x, each resolved (the stored proofs, Arb or mpmath) as a
    doubt is."""
    v, unit = np.empty(len(x)), np.empty(len(x))
    resolve_all(function, x, np.arange(len(x)), v, unit)
    return v, unit


def one_compiled_run(function: Function, a: float, b: float) -> bool:
    """Whether one compiled loop computes the exact values of a monotone run from a to b."""
    return module_of(function).one_compiled_run(function, a, b)


def relative_bound(function: str | Function) -> float:
    """The bound of the fast value's error, relative, for this function here."""
    function = get_function(function)
    return module_of(function).relative_bound(function)


def warm(functions: Iterable[str | Function] | None = None) -> float | None:
    """Compile the loops (or load them from numba's disk cache) before any block is timed:
    those of ``functions`` (every sweepable row's where None) and the loops every sweep runs;
    the seconds it took, or None without numba (docs/commands/sweep.md gives the times)."""
    if loops.kernels() is None:
        return None
    begun = time.perf_counter()
    wanted = (sweepable() if functions is None
              else [get_function(f) for f in functions])
    by_module: dict[str, tuple[SweepReference, list[Function]]] = {}
    for function in wanted:
        module = module_of(function)
        by_module.setdefault(function.sweep_reference, (module, []))[1].append(function)
    for module, mine in by_module.values():
        module.warm(tuple(mine))
    compiled = loops.kernels()
    bits = np.empty(2, dtype=np.uint32)
    compiled.encodings(bits, np.uint32(1))
    compiled.consecutive_then(bits, np.uint32(1), np.uint32(3))
    v, unit, delta = np.empty(2), np.empty(2), np.zeros(2, dtype=np.int8)
    read_only = np.array([0.5, 0.75], dtype=np.float32)
    read_only.flags.writeable = False
    # the loops that read an implementation's outputs, for writable ones and for read-only
    # ones (NumPy's view of JAX's): numba compiles each apart
    for y in (read_only.copy(), read_only):
        compiled.score(y, v, unit)
        compiled.histogram_above_four(y, v, unit, np.zeros(3, dtype=np.int64))
        y_bits = y.view(np.uint32)
        compiled.consecutive(y_bits, np.uint32(1))
        compiled.constant(y_bits, np.uint32(1), np.uint32(0x7FFFFFFF))
        compiled.near_product(y_bits, np.uint32(1), np.float32(1), delta)
        compiled.product_deltas(y_bits, np.uint32(1), np.float32(1), delta)
        compiled.all_non_finite(y_bits)
        for other in (read_only, read_only.copy()):  # a kept positive block's, either kind
            compiled.opposite(y_bits, other.view(np.uint32))
    return time.perf_counter() - begun

"""A sweep block's inputs: the encodings written into a task's one array (Inputs), read back
as floats (Run), handed to an implementation and tested intact afterwards (call, Guard) -
where the last test of a block also writes the next block's inputs."""
from __future__ import annotations

import time
from typing import NamedTuple

import numpy as np

from ..backends import Implementation
from ..formats import FLOAT32
from . import loops

# A run scored in closed form (known.Known) needs no float64 array: its implementations are
# called in spans of this many, aligned (so within a binade; chunk._known_run).
# 2^19: its inputs and outputs, 4 MB a worker, leave the last-level cache to the other
# workers; one process alone does better with 2^20 (docs/design.md, The sweep)
KNOWN_SPAN = 1 << 19
_OFFSETS = np.arange(KNOWN_SPAN, dtype=np.uint32)  # a block's encodings: start + these


class Inputs:
    """A job's input array, one block's encodings at a time. Where the block's last
    implementation left them intact, the pass that tests them rewrites them as the next
    block's (``following``: where that starts) - a write pass less per block, and the test's
    read then costs little more (docs/design.md, The sweep)."""

    def __init__(self) -> None:
        self.array = np.empty(KNOWN_SPAN, dtype=np.uint32)
        self.following: int | None = None  # the next block's start, where the job has one
        self.holds: tuple[int, int] | None = None  # (first encoding, count) written already

    def block(self, start: int, stop: int) -> np.ndarray:
        """The block's inputs, written unless the last test wrote them. A block longer than
        the array is refused: its slice would hold fewer inputs than the block's figures
        count (a span set above KNOWN_SPAN in one module and not here)."""
        if not 0 < stop - start <= len(self.array):
            raise ValueError(f"a block of {stop - start} encodings from {start:#x}: this "
                             f"task's input array holds 1 to {len(self.array)}")
        bits = self.array[:stop - start]
        held = self.holds[1] if self.holds and self.holds[0] == start else 0
        if held < len(bits):
            encodings(start + held, stop, bits[held:])
        self.holds = None
        return bits


class Run:
    """The float32 inputs of a block read off their encodings, indexed as an array: what the
    figures after an implementation's call are computed from, never the block's array, which
    may hold the next block's inputs by then."""

    def __init__(self, start: int, n: int):
        self.start, self.n = start, n
        # index: value - the closed form reads each end a few times
        self._values: dict[int, float] = {}

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> float:
        if not -self.n <= i < self.n:
            raise IndexError(i)
        i %= self.n
        if (value := self._values.get(i)) is None:
            value = self._values[i] = FLOAT32.value_of(self.start + i)
        return value


def encodings(start: int, stop: int, into: np.ndarray | None = None) -> np.ndarray:
    """The encodings [start, stop) as uint32, a block's inputs: written into the start of
    ``into`` where given (a task's Inputs), else into a new array."""
    out = np.empty(stop - start, dtype=np.uint32) if into is None else into[:stop - start]
    if (compiled := loops.kernels()) is not None:
        compiled.encodings(out, np.uint32(start))
    else:
        np.add(_OFFSETS[:stop - start], np.uint32(start), out=out)  # (np.arange is slower)
    return out


def consecutive(x: np.ndarray, first: int) -> bool:
    """Whether x still holds the encodings from ``first`` on, bit for bit: the test that
    lets a sweep hand its block's inputs to an implementation without a copy."""
    bits = x.view(np.uint32)
    if (compiled := loops.kernels()) is not None:
        return bool(compiled.consecutive(bits, np.uint32(first)))
    return np.array_equal(bits, encodings(first, first + len(x)))


class Call(NamedTuple):
    """An implementation's outputs for a block, its own time and its input guard's."""

    y: np.ndarray
    eval_s: float
    guard_s: float


def call(impl: Implementation, x: np.ndarray, first: int, inputs: Inputs | None) -> Call:
    """impl on a block's inputs x (the encodings from ``first`` on), timed apart from the
    guard that tests them intact afterwards - and, given ``inputs`` (for a block's last
    implementation), rewrites them as the next block's (Guard). Raises ImplementationError."""
    clock = time.perf_counter()
    guard = Guard(first, inputs)
    y = impl(x, intact=guard)
    return Call(y, time.perf_counter() - clock - guard.seconds, guard.seconds)


class Guard:
    """The test that an implementation left its block's inputs intact (consecutive),
    timed: it is gelucheck's cost, not the implementation's, and --profile shows it apart."""

    def __init__(self, first: int, inputs: Inputs | None = None):
        self.first, self.seconds, self.inputs = first, 0.0, inputs

    def __call__(self, x: np.ndarray, out: object = None) -> bool:
        """Whether x is intact; and, for a block's last implementation (``inputs`` given)
        whose outputs ``out`` are an array of their own, x rewritten as the next block's
        inputs in the same pass - unless it was not intact (then partly: the sweep writes
        the block's inputs again)."""
        begun = time.perf_counter()
        inputs = self.inputs
        following = inputs.following if inputs is not None else None
        compiled = loops.kernels()
        if (inputs is not None and following is not None and compiled is not None
                and isinstance(out, np.ndarray) and not np.may_share_memory(out, x)):
            intact = bool(compiled.consecutive_then(x.view(np.uint32), np.uint32(self.first),
                                                    np.uint32(following)))
            inputs.holds = (following, len(x)) if intact else None
        else:
            intact = consecutive(x, self.first)
        self.seconds += time.perf_counter() - begun
        return intact

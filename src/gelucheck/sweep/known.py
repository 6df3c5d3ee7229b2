"""Runs of float32 inputs whose correctly rounded results, and the errors an implementation
that returns them makes, follow in closed form - scored without any float64 pass
(docs/design.md, The sweep)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from typing import Any, Protocol

import mpmath
import numpy as np

from ..formats import FLOAT32
from ..functions import (
    PDF,
    Function,
    get_function,
)
from . import loops
from .constants import PHI0
from .edges import far_value, right_value
from .reference import spec


class Indexed(Protocol):
    """A run's inputs as the closed forms read them: an array of float32, or anything indexed
    alike (inputs.Run, which reads each input off its encoding)."""

    def __len__(self) -> int: ...

    def __getitem__(self, i: int, /) -> Any: ...


@dataclass(frozen=True)
class Known:
    """A monotone run of inputs on which the correctly rounded float32 results, and the errors
    they make, follow in closed form (docs/design.md, The sweep). The results' encodings are
    ``scale``·(x's encoding) + ``shift`` modulo 2^32 (scale 1: x itself or, shift -2^23, x/2;
    scale 0: one constant). An implementation that returns exactly those is scored without
    any float64 pass: at each input the exact value is the result + r,
    r = offset + slope·x^power, of one sign over the run and monotone in |x|; the error is
    |r| / unit ulps - twice that at the index ``doubled``, where the exact value lies just
    inside the binade below a power of two."""

    scale: int
    shift: int
    offset: float = 0.0
    slope: float = 0.0
    power: int = 0
    unit: float = 1.0
    doubled: int | None = None

    def expected(self, x: np.ndarray) -> np.ndarray:
        """The correctly rounded results at the float32 inputs x."""
        bits = x.view(np.uint32) * np.uint32(self.scale) + np.uint32(self.shift % (1 << 32))
        return bits.view(np.float32)

    def result(self, encoding: int) -> float:
        """The correctly rounded result at the input of this encoding (expected, for one
        input, without a NumPy call: paid by every block)."""
        return FLOAT32.value_of((encoding * self.scale + self.shift) % (1 << 32))

    def matches(self, y: np.ndarray, x: np.ndarray) -> bool:
        """Whether y is those results, float for float (a zero of either sign where the
        result is a zero; never a NaN): one compiled pass over y where x is a run of
        consecutive encodings (as a sweep's blocks are), else two NumPy passes."""
        bits = x.view(np.uint32)
        if len(x) and int(bits[-1]) - int(bits[0]) == len(x) - 1:  # (x is monotone)
            compiled = self._compiled_match(y, int(bits[0]))
            if compiled is not None:
                return compiled
        return np.array_equal(y, self.expected(x))  # ±0 alike; NaN never

    def matches_run(self, y: np.ndarray, start: int) -> bool:
        """matches for the inputs of the encodings start, start + 1, ...: read off those,
        not off an array - a sweep's block may hold the next block's inputs by then."""
        compiled = self._compiled_match(y, start)
        if compiled is not None:
            return compiled
        x = (np.arange(len(y), dtype=np.uint32) + np.uint32(start)).view(np.float32)
        return np.array_equal(y, self.expected(x))

    def _compiled_match(self, y: np.ndarray, start: int) -> bool | None:
        """matches_run in one compiled pass over y, or None where there is none: without
        numba, or where the results' encodings are not one constant nor consecutive."""
        n = len(y)
        compiled = loops.kernels() if y.dtype == np.float32 and n else None
        if compiled is None:
            return None
        first = (start * self.scale + self.shift) % (1 << 32)
        if self.scale == 0:
            mask = 0x7FFFFFFF if first & 0x7FFFFFFF == 0 else 0xFFFFFFFF  # ±0 alike
            return bool(compiled.constant(y.view(np.uint32), np.uint32(first), np.uint32(mask)))
        last = (first + n - 1) % (1 << 32)
        if first & 0x7FFFFFFF and last & 0x7FFFFFFF and first >> 31 == last >> 31:
            # one sign, no zero among the results: consecutive encodings
            return bool(compiled.consecutive(y.view(np.uint32), np.uint32(first)))
        return None

    def residual(self, x: Indexed, i: int) -> float:
        """r at the input x[i]: the exact value minus the expected result."""
        return self.offset + self.slope * float(x[i]) ** self.power

    def error(self, x: Indexed, i: int) -> float:
        """The error of expected[i], in ulps of the exact value."""
        return abs(self.residual(x, i)) / self.unit * (2 if i == self.doubled else 1)

    def error_sum(self, x: Indexed) -> float:
        """The sum of the errors over the run, whose |x| are a0, a0 + step, ... (a binade's
        equal spacing, or r = 0): sums of an arithmetic progression's powers, in closed form.
        r keeps its sign, so Σ|r| = |Σr|."""
        n, a0 = len(x), abs(float(x[0]))
        step = (abs(float(x[-1])) - a0) / (n - 1) if n > 1 else 0.0
        pairs = n * (n - 1)  # Σi = pairs/2, Σi² = pairs·(2n - 1)/6
        powers = [n, n * a0 + step * pairs / 2,
                  n * a0 * a0 + a0 * step * pairs + step * step * pairs * (2 * n - 1) / 6]
        # Σx^p = sign^p · Σ|x|^p: one sign (math.copysign, not a NumPy call)
        sign = math.copysign(1.0, x[0])
        total = abs(self.offset * n + self.slope * sign**self.power * powers[self.power])
        if self.doubled is not None:
            total += abs(self.residual(x, self.doubled))
        return total / self.unit


# Far left and right: the reference is a zero, 1 or x itself (r = 0). Near zero: the first
# Taylor term beyond the correctly rounded result (each function's SweepSpec: tiny_slope,
# tiny_power, up to known_tiny). x/2 is exact from 2^-124 up (and no float32 there lies
# below 2^-126).
TINY_FLOOR = 2.0**-124


@cache
def _pdf_offset() -> float:
    """φ(0) minus its float32, beyond float64's rounding of φ(0)."""
    with mpmath.workdps(40):
        return float(1 / mpmath.sqrt(2 * mpmath.pi) - mpmath.mpf(float(np.float32(PHI0))))


def _tiny_part(function: Function, x: Indexed) -> Known:
    """|x| in [2^-124, known_tiny) within one binade."""
    negative = bool(np.signbit(x[0]))
    facts = spec(function)
    slope, power = facts.tiny_slope, facts.tiny_power
    if function.family == PDF:
        return Known(0, _encoding(PHI0), offset=_pdf_offset(), slope=slope, power=power,
                     unit=float(FLOAT32.ulp_of(np.float64(PHI0))))
    if power == 1:  # Φ and GELU′ 1/2 + r, erfc 1 + r: in the binade below the result
        # (a power of two, float32's ulp 2^-23 of it above) where r < 0 - Φ's for x < 0,
        # erfc's for x > 0
        below = (slope > 0) == negative
        ulp = facts.tiny_value * 2.0**-23
        return Known(0, _encoding(facts.tiny_value), slope=slope, power=1,
                     unit=ulp / 2 if below else ulp)
    # GELU: x/2 + r, r > 0; for x < 0 the exact value lies below |x/2|, which at a power of
    # two puts it in the binade below. x/2 is x's encoding with the exponent field one lower
    # (x/2 >= 2^-125 is normal).
    first = abs(float(x[0]))
    unit = math.ldexp(1.0, math.frexp(first / 2)[1] - FLOAT32.precision)  # a normal float32's
    # ulp (not FLOAT32.ulp_of's NumPy call: paid by every block)
    doubled = 0 if negative and math.frexp(first)[0] == 0.5 else None
    return Known(1, -(1 << 23), slope=slope, power=2, unit=unit, doubled=doubled)


def known_kind(function: Function, first: float, last: float) -> str | None:
    """Which part a monotone run of float32 inputs from ``first`` to ``last`` (increasing
    encodings) lies wholly in: "far" (the far left), "right", "tiny" (|x| in
    [2^-124, known_tiny) within one binade), or None."""
    lo, hi = sorted((first, last))
    facts = spec(function)
    if hi <= facts.far_left:
        return "far"
    if lo > facts.right_edge:
        return "right"
    a, b = abs(first), abs(last)
    if ((lo > 0 or hi < 0) and a >= TINY_FLOOR and b < facts.known_tiny
            and math.frexp(a)[1] == math.frexp(b)[1]):
        return "tiny"
    return None


def is_known(function: Function, first: float, last: float) -> bool:
    """Whether known_part gives the results and errors of such a run in closed form."""
    return known_kind(function, first, last) is not None


def known_part(function: str | Function, x: Indexed) -> Known | None:
    """The results and errors in closed form on a run that is_known; None elsewhere."""
    function = get_function(function)
    kind = known_kind(function, float(x[0]), float(x[-1])) if len(x) else None
    if kind in ("far", "right"):
        return _outer_part(function, kind)
    return _tiny_part(function, x) if kind == "tiny" else None


@cache
def _outer_part(function: Function, kind: str) -> Known:
    """The far left's or the right's results: one constant, or the inputs themselves (made
    once per function, not by every block)."""
    if kind == "far":
        return Known(0, _encoding(far_value(function)))
    x = np.zeros(0)  # a stand-in: GELU's value there is x itself
    value = right_value(function, x)
    return Known(1, 0) if value is x else Known(0, _encoding(float(value)))


def _encoding(value: float) -> int:
    """The float32 encoding of value (exact in float32, or rounded: φ(0))."""
    return int(np.float32(value).view(np.uint32))

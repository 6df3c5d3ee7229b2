"""Input plans: where the stored float32/float64 samples put their dense windows
(docs/design.md, Inputs).

Every function names one plan in its row. The functions of one plan share one stored input
file, so a new function that joins a plan adds its values without moving anyone's inputs, and a
function with anchors of its own (erf's saturation, erfc's underflow) gets a plan of its own.
Nothing here imports the function table: a plan is given the mpmath formulas it needs.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import mpmath
import numpy as np

from ..formats import Format
from . import mpformulas

WORKING_PRECISION = 128  # the reference's own starting precision, for the crossings


@dataclass(frozen=True)
class InputPlan:
    name: str
    description: str
    anchors: Callable[[Format], list[float]]  # centres of the dense windows, per format

    def __str__(self) -> str:
        return self.name


def crossing(mp_fn: Callable, threshold, fmt: Format, lo: float, hi: float) -> float:
    """The x in [lo, hi] where the mpmath function crosses ``threshold`` (monotone there),
    as a value of fmt: bisection over fmt's own values."""
    def above(x: float) -> bool:
        with mpmath.mp.workprec(WORKING_PRECISION):
            return mp_fn(mpmath.mpf(x)) > threshold

    rising = not above(lo)
    for _ in range(200):
        mid = float(np.asarray((lo + hi) / 2, dtype=fmt.dtype))
        if mid in (lo, hi):
            break
        if above(mid) == rising:
            hi = mid
        else:
            lo = mid
    return hi


def _root(mp_fn: Callable, start: str, digits: int) -> float:
    with mpmath.mp.workdps(digits):
        return float(mpmath.findroot(mp_fn, mpmath.mpf(start)))


def _range_edges(fmt: Format) -> list[float]:
    """The anchors every plan has: ±1, the top binade and the largest values, zero."""
    return [1.0, -1.0, 2.0 ** fmt.emax, fmt.max_finite, -fmt.max_finite, 0.0]


def _underflow_edges(fmt: Format, mp_fn: Callable, sign: float, lo: float, hi: float):
    """Where |f| falls below half the smallest subnormal, and where it leaves the normals."""
    two = mpmath.mpf(2)  # thresholds as mpf: 2**-1075 is no float64
    return [crossing(mp_fn, sign * two ** t, fmt, lo, hi)
            for t in (fmt.quantum_exponent - 1, fmt.emin)]


def _near(value: int, fmt: Format):
    """value - a quarter ulp of 1 in fmt: where f rounds to its limit ``value`` (1 or 2)."""
    with mpmath.mp.workprec(256):  # 1 - 2**-54 needs 54 bits
        return value - mpmath.mpf(2) ** -(fmt.precision + 1)


# The Gaussian CDF family (Φ, GELU, the tanh form, their derivatives): both minima, where
# each derivative peaks, each function's underflow in the left tail, Φ saturating to 1.
_GELU_FAMILY_TAILS = [  # (formula, its sign far left)
    (mpformulas.phi, 1.0), (mpformulas.gelu, -1.0), (mpformulas.gelu_tanh, -1.0),
    (mpformulas.phi_prime, 1.0), (mpformulas.gelu_prime, -1.0),
    (mpformulas.gelu_tanh_prime, -1.0)]


def gelu_family_anchors(fmt: Format) -> list[float]:
    anchors = [_root(mpformulas.gelu_prime, "-0.75", 40),
               _root(mpformulas.gelu_tanh_prime, "-0.75", 40), *_range_edges(fmt)]
    for slope in (mpformulas.gelu_prime2, mpformulas.gelu_tanh_prime2):
        anchors += [_root(slope, side, 30) for side in ("1.4", "-1.4")]
    for mp_fn, sign in _GELU_FAMILY_TAILS:
        anchors += _underflow_edges(fmt, mp_fn, sign, -80.0, -1.0)
    anchors.append(crossing(mpformulas.phi, _near(1, fmt), fmt, 0.5, 80.0))
    return anchors


def erf_family_anchors(fmt: Format) -> list[float]:
    """erf rounding to ±1 (about 3.92 in float32, 5.92 in float64), erfc rounding to 2 on
    the left, erfc's underflow on the right (about 10.05 in float32, 27.2 in float64) and its
    entry into the subnormals."""
    anchors = _range_edges(fmt)
    to_one = crossing(mpformulas.erf, _near(1, fmt), fmt, 0.5, 30.0)
    anchors += [to_one, -to_one]
    anchors.append(crossing(mpformulas.erfc, _near(2, fmt), fmt, -30.0, -0.5))
    anchors += _underflow_edges(fmt, mpformulas.erfc, 1.0, 1.0, 40.0)
    return anchors


GELU_FAMILY = InputPlan("gelu", "the Gaussian CDF family: Φ, GELU, its tanh form, their "
                        "derivatives", gelu_family_anchors)
ERF_FAMILY = InputPlan("erf", "erf and erfc", erf_family_anchors)

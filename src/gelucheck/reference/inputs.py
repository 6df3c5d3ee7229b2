"""The inputs of the reference data, per format (docs/design.md, Inputs).

16-bit formats: every finite value. float32 and float64: a seeded, stratified sample - every
binade of both signs with its edges, dense over [-15, 15], the neighbourhood of both minima,
and the edges where each function underflows, leaves the subnormal range or saturates.
"""
from __future__ import annotations

import mpmath
import numpy as np

from ..formats import Format
from ..functions import FUNCTIONS, PHI
from .mpref import evaluate, gelu_minimum, gelu_tanh_minimum, man_exp

SEED = 20261129
# Per format: random significands per binade and sign, random values in [-15, 15], and the
# number of consecutive values taken each side of every edge and minimum.
PLAN = {
    "float32": {"per_binade": 96, "dense": 40_000, "window": 2048},
    "float64": {"per_binade": 5, "dense": 4_000, "window": 128},
}


def reference_inputs(fmt: Format) -> np.ndarray:
    """The sorted, unique inputs stored for ``fmt`` (all finite values for 16-bit formats)."""
    if fmt.bits == 16:
        return fmt.all_finite()
    plan = PLAN[fmt.name]
    rng = np.random.default_rng([SEED, fmt.bits])
    parts = [
        _binades(fmt, plan["per_binade"], rng),
        rng.uniform(-15, 15, plan["dense"]).astype(fmt.dtype),
        _dense_bits_near_zero(fmt, plan["dense"] // 4, rng),
    ]
    for centre in _anchors(fmt):
        parts.append(_window(fmt, centre, plan["window"]))
    values = np.concatenate([np.asarray(p, dtype=fmt.dtype) for p in parts])
    values = values[np.isfinite(values)]
    return _sorted_unique(fmt, values)


def _binades(fmt: Format, per_binade: int, rng) -> np.ndarray:
    """Per exponent field (subnormals included) and sign: its first, last and random values."""
    fraction_bits = fmt.precision - 1
    fields = np.arange(0, (1 << fmt.exponent_bits) - 1, dtype=np.uint64)
    last = (1 << fraction_bits) - 1
    random_fractions = rng.integers(0, last, size=(fields.size, per_binade), endpoint=True,
                                    dtype=np.uint64)
    fractions = np.concatenate(
        [np.zeros((fields.size, 1), np.uint64), np.full((fields.size, 1), last, np.uint64),
         random_fractions], axis=1)
    magnitudes = (fields[:, None] << np.uint64(fraction_bits)) | fractions
    bits = np.concatenate([magnitudes.ravel(), magnitudes.ravel() | np.uint64(fmt.sign_bit)])
    return fmt.from_bits(bits.astype(fmt.uint))


def _dense_bits_near_zero(fmt: Format, count: int, rng) -> np.ndarray:
    """Uniform over the encodings of [-15, 15]: as many tiny |x| as moderate ones."""
    top = int(fmt.bits_of(15.0))
    bits = rng.integers(0, top, size=count, endpoint=True, dtype=np.uint64)
    signs = rng.integers(0, 2, size=count, dtype=np.uint64) * np.uint64(fmt.sign_bit)
    return fmt.from_bits((bits | signs).astype(fmt.uint))


def _window(fmt: Format, centre: float, half_width: int) -> np.ndarray:
    """``half_width`` consecutive values each side of ``centre`` (rounded into fmt), centre too."""
    return fmt.step(centre, np.arange(-half_width, half_width + 1))


def _sorted_unique(fmt: Format, values: np.ndarray) -> np.ndarray:
    bits = np.unique(fmt.bits_of(values))
    ordered = fmt.from_bits(bits)
    order = np.argsort(ordered.astype(np.float64), kind="stable")
    return ordered[order]


def _anchors(fmt: Format) -> list[float]:
    """Where dense windows go: both minima (where the derivatives change sign), the extremes
    of the derivatives, the edges of each function, the top of the range."""
    anchors = [float(gelu_minimum()[0]), float(gelu_tanh_minimum()[0]), 1.0, -1.0,
               2.0 ** fmt.emax, fmt.max_finite, -fmt.max_finite, 0.0]
    for function in FUNCTIONS.values():
        if function.mp_slope is not None:
            with mpmath.mp.workdps(30):
                anchors += [float(mpmath.findroot(function.mp_slope, mpmath.mpf(side)))
                            for side in ("1.4", "-1.4")]
    two = mpmath.mpf(2)  # thresholds as mpf: 2**-1075 is no float64, 1 - 2**-54 needs 54 bits
    for function in FUNCTIONS.values():
        sign = -1.0 if function.zero_is_negative(-1.0) else 1.0  # its sign in the far left
        # Underflow to zero, and the entry into the subnormal range, in the negative tail.
        for threshold in (sign * two ** (fmt.quantum_exponent - 1), sign * two ** fmt.emin):
            anchors.append(_crossing(function, threshold, fmt, -80.0, -1.0))
    # Φ saturating to 1 (1 - Φ below a quarter ulp of 1), GELU to x likewise.
    with mpmath.mp.workprec(256):
        near_one = 1 - two ** -(fmt.precision + 1)
    anchors.append(_crossing(PHI, near_one, fmt, 0.5, 80.0))
    return anchors


def _crossing(function, threshold, fmt: Format, lo: float, hi: float) -> float:
    """The x in [lo, hi] where the function crosses ``threshold`` (monotone there), in fmt."""
    def above(x: float) -> bool:
        man, exp = man_exp(evaluate(function, x))
        return mpmath.mpf(man) * mpmath.mpf(2) ** exp > threshold

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

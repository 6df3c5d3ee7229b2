"""The inputs of the reference data, per format (docs/design.md, Inputs).

16-bit formats: every finite value. float32 and float64: a seeded, stratified sample - every
binade of both signs with its edges, dense over [-15, 15], and dense windows about the
anchors of an input plan (reference/plans.py): for the GELU family both minima and the edges
where each function underflows, leaves the subnormal range or saturates; for erf and erfc
where they round to ±1 and 2 and where erfc underflows.
"""
from __future__ import annotations

import numpy as np

from ..formats import Format
from .plans import InputPlan

SEED = 20261129
# Per format (the same for every plan): random significands per binade and sign, random
# values in [-15, 15], and the number of consecutive values taken each side of every anchor.
PLAN = {
    "float32": {"per_binade": 96, "dense": 40_000, "window": 2048},
    "float64": {"per_binade": 5, "dense": 4_000, "window": 128},
}


def reference_inputs(fmt: Format, plan: InputPlan) -> np.ndarray:
    """The sorted, unique inputs stored for ``fmt`` and ``plan`` (all finite values for 16-bit
    formats). The random part is the same for every plan; only the windows differ."""
    if fmt.bits == 16:
        return fmt.all_finite()
    counts = PLAN[fmt.name]
    rng = np.random.default_rng([SEED, fmt.bits])
    parts = [
        _binades(fmt, counts["per_binade"], rng),
        rng.uniform(-15, 15, counts["dense"]).astype(fmt.dtype),
        _dense_bits_near_zero(fmt, counts["dense"] // 4, rng),
    ]
    for centre in plan.anchors(fmt):
        parts.append(_window(fmt, centre, counts["window"]))
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

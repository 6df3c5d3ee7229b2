"""The ulp metric (docs/design.md, ULP error): |y - v| / ulp(v), ulp(v) = 2**(max(e, emin) - p + 1),
e = floor(log2|v|). 0.5 is the bound of correct rounding; fractions matter.

``exact`` may be a float64 array for the 16- and 32-bit formats: 53 bits carry the fraction
of their ulps far beyond need - except within 2^-53 of a power of two, where the float64 can
land on the power itself and ulp(v) is then taken from the wrong binade (Φ(x) for negative
|x| < 2^-54 is just below 1/2, and its float64 is 1/2). An :class:`Exact` - the correctly
rounded value plus its residual in ulps - has no such blind spot and stays exact in the
subnormal range, where the low half of a double-double underflows; float64 requires it, and
the reference data is always passed that way.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .formats import Format, get_format


@dataclass(frozen=True)
class Exact:
    """v = rounded + residual * ulp(v), residual in [-1/2, 1/2]."""

    rounded: np.ndarray  # float64 values, each representable in the format
    residual: np.ndarray
    # ulp(v) per format, computed once: a stored reference is scored against every
    # implementation measured at its inputs
    _units: dict = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self):
        object.__setattr__(self, "rounded", np.asarray(self.rounded, dtype=np.float64))
        object.__setattr__(self, "residual", np.asarray(self.residual, dtype=np.float64))

    def __getitem__(self, index) -> Exact:
        return Exact(self.rounded[index], self.residual[index])

    def unit(self, fmt: Format) -> np.ndarray:
        """ulp(v) in ``fmt``, elementwise (read-only: it is shared)."""
        if fmt.name not in self._units:
            unit = _ulp_of_exact(self, fmt)
            unit.flags.writeable = False
            self._units[fmt.name] = unit
        return self._units[fmt.name]


def is_ulp_limit(value) -> bool:
    """Whether ``value`` can limit an error in ulps: a real number, 0 or more - inf allowed
    (no limit), NaN not (every comparison with it is false: it would let everything pass),
    True and False not."""
    real = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, (bool, np.bool_))
    return real and value >= 0


def ulp(v, fmt: str | Format) -> np.ndarray:
    """ulp(v) in fmt; inf for infinite v, NaN for NaN."""
    fmt = get_format(fmt)
    v = np.asarray(v, dtype=np.float64)
    finite = np.isfinite(v)
    return np.where(finite, fmt.ulp_of(np.where(finite, v, 1.0)), np.abs(v))


def _ulp_of_exact(exact: Exact, fmt: Format) -> np.ndarray:
    r = np.where(np.isfinite(exact.rounded), exact.rounded, 1.0)
    return ulp_of_exact(r, exact.residual, fmt)


def ulp_of_exact(rounded: np.ndarray, side: np.ndarray, fmt: Format) -> np.ndarray:
    """fmt's ulp of exact values, from their finite correctly rounded results and the sign
    of exact - rounded (``side``): the rounded result's, but where the exact value lies just
    inside the binade below the power of two it rounded up to, the lower binade's. The sign
    says the side even as a signed zero (a difference too small for float64); an exact
    value's zero residual is signed like the value (not inward)."""
    unit = fmt.ulp_of(rounded)
    inward = np.signbit(side) != np.signbit(rounded)
    below = (np.abs(np.frexp(rounded)[0]) == 0.5) & inward
    return np.where(below, np.maximum(unit / 2, 2.0**fmt.quantum_exponent), unit)


def _scaled_difference(y: np.ndarray, r: np.ndarray, unit: np.ndarray) -> np.ndarray:
    """(y - r) / unit without spurious overflow when y and r are huge and of opposite signs."""
    with np.errstate(over="ignore", invalid="ignore"):
        d = (y - r) / unit
        halved = (y * 0.5 - r * 0.5) / unit * 2
    return np.where(np.isinf(d) & np.isfinite(y) & np.isfinite(r), halved, d)


def _special(y: np.ndarray, v: np.ndarray, err: np.ndarray) -> np.ndarray:
    """Infinite error for NaN or inf where the exact value is a finite number, and vice versa."""
    nan_ok = np.isnan(v) & np.isnan(y)
    inf_ok = np.isinf(v) & (y == v)
    finite_ok = np.isfinite(v) & np.isfinite(y)
    err = np.where(finite_ok, err, np.inf)
    return np.where(nan_ok | inf_ok, 0.0, err)


def _as_float64(values) -> np.ndarray:
    return np.asarray(values).astype(np.float64)


def ulp_error(computed, exact, fmt: str | Format) -> np.ndarray:
    """|computed - exact| / ulp(exact) in fmt, elementwise; inf for a wrong inf or NaN."""
    fmt = get_format(fmt)
    y = _as_float64(computed)
    if isinstance(exact, Exact):
        unit = exact.unit(fmt)
        with np.errstate(invalid="ignore"):
            err = np.abs(_scaled_difference(y, exact.rounded, unit) - exact.residual)
        return _special(y, exact.rounded, err)
    if fmt.bits == 64:
        raise TypeError("float64 needs an Exact (rounded, residual) reference: no float64 "
                        "array carries more than 53 bits")
    v = _as_float64(exact)
    err = np.abs(_scaled_difference(y, v, ulp(v, fmt)))
    return _special(y, v, err)


def abs_error(computed, exact, fmt: str | Format) -> np.ndarray:
    """|computed - exact| in float64 (inf where ulp_error is infinite); an :class:`Exact`'s
    residual is in ulps of ``fmt``, the format its rounded values are rounded to."""
    y = _as_float64(computed)
    if isinstance(exact, Exact):
        v = exact.rounded
        unit = exact.unit(get_format(fmt))
        with np.errstate(invalid="ignore", over="ignore"):
            err = np.abs((y - v) - exact.residual * unit)
    else:
        v = _as_float64(exact)
        with np.errstate(invalid="ignore", over="ignore"):
            err = np.abs(y - v)
    return _special(y, v, err)


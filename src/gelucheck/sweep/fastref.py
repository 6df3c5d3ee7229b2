"""A reference fit for all 2^32 float32 inputs: float64 formulas whose error bound is
established against mpmath, with Arb (or mpmath) for the few inputs whose float64 value lies
too close to a float32 rounding boundary for that bound (docs/design.md, The sweep).

x splits into four parts, contiguous in a monotone chunk of encodings:
- far left (x <= -20, the tanh form x <= -12): |f(x)| < 2^-200, a signed zero; every float32
  result rounds to zero there and the neglected value is below 2^-50 of the quantum.
- |x| < 2^-30: Taylor, Φ = 1/2 + x·φ(0), GELU = x·Φ, tanh form = x·(1/2 + x·√(2/π)/2); the
  next terms are below 2^-60 relative. Where float64 loses the x² term, the value is nudged
  one float64 ulp towards it, so that it lies on the true side of x/2 (a float32 tie when x
  is subnormal and odd) and of a power of two.
- x >= 9: 1 or x; the neglected Q(9) < 2^-62 is below, never above.
- the middle: float64 SciPy ``ndtr`` (GELU: x·ndtr(x)), x/(1 + exp(-2u)) for the tanh form,
  checked against float32s, their rounding midpoints and powers of two, the stored proofs,
  Arb or mpmath where too close.
The derivatives (GELU′, the tanh form′, φ) follow the same plan in ``_fill_smooth``, with the
bound relative to the size of their terms, which cancel at x*.

The error of the float64 value is at most RELATIVE_BOUND · max(|v|, 2^-126): measured
against the mpmath reference, the worst is 2^-44.96 (Φ and GELU near x = -12.95, where
erfc's argument rounding dominates) and 2^-45.3 for the tanh form; 2^-40 leaves 32x.
"""
from __future__ import annotations

import itertools
import math
from functools import cache

import mpmath
import numpy as np
from scipy import special

from ..formats import FLOAT32
from ..functions import (
    CDF,
    DERIVATIVE,
    GELU,
    GELU_GRAD,
    GELU_TANH,
    GELU_TANH_GRAD,
    PDF,
    PHI,
    PHI_GRAD,
    Function,
    get_function,
)
from ..reference.mpref import minimum
from . import loops, phi_table
from .constants import (
    CUBIC,
    DROPPED,
    ONE_UP,
    PHI0,
    QUANTUM,
    TAIL_FLOOR,
    K,
)
from .cuts import magnitude_cuts, sorted_cuts
from .edges import TINY, far_left, far_reference, right_edge, right_reference
from .known import known_kind
from .reference import SweepSpec

# Where each function's parts begin, and its closed forms near 0 (reference.SweepSpec):
# - far left: |f| < 2^-200 from -20 (the tanh form's from -12);
# - right: saturation at 9 (Φ 1 from below, GELU x; Q(9) < 2^-62), GELU′ of both forms
#   1 + (below 2^-55) from 9, φ's zero from 20;
# - near 0, the first Taylor term beyond the correctly rounded result (its neglected rest
#   below 2^-48 of it): GELU (both forms) x/2 + φ(0)·x², Φ 1/2 + φ(0)·x, GELU′ (both forms)
#   1/2 + √(2/π)·x, φ φ(0)·(1 - x²/2); up to where that result is the correctly rounded one,
#   r below half its ulp (a quarter at a power of two, where the exact value lies in the
#   binade below): GELU φ(0)x²/|x/2| < 2^-24 for |x| < 2^-23.7, and at x/2 = -2^k,
#   φ(0)x² < 2^(k-25) for |x| <= 2^-25; Φ φ(0)|x| < 2^-26 (x < 0, below 1/2) for
#   |x| < 2^-24.7; GELU′ √(2/π)|x| < 2^-26 for |x| < 2^-25.7; φ φ(0)x²/2 < 2^-26 -
#   |φ(0) - float32(φ(0))| = 3.5e-9 for |x| < 2^-12.9.
SPECS = {
    PHI: SweepSpec(-20.0, 9.0, 2.0**-25, PHI0, 1, taylor=PHI0),
    GELU: SweepSpec(-20.0, 9.0, 2.0**-25, PHI0, 2, taylor=PHI0),
    GELU_TANH: SweepSpec(-12.0, 9.0, 2.0**-25, PHI0, 2, taylor=K / 2),
    PHI_GRAD: SweepSpec(-20.0, 20.0, 2.0**-26, -PHI0 / 2, 2),
    GELU_GRAD: SweepSpec(-20.0, 9.0, 2.0**-26, K, 1),
    GELU_TANH_GRAD: SweepSpec(-12.0, 9.0, 2.0**-26, K, 1),
}

_PHI0_UNIT = float(FLOAT32.ulp_of(np.float64(PHI0)))  # φ's near 0

RELATIVE_BOUND = 2.0**-40
# The compiled Φ and GELU (kernels.phi_block) err by at most this, relative: measured against
# mpmath, 2^-50.5 at worst (200 random inputs in each interval of the table, both signs;
# tests/test_sweep_kernels.py holds it 16x inside); 2^-46 leaves 22x and sends 64x fewer inputs
# to Arb than RELATIVE_BOUND would.
COMPILED_BOUND = 2.0**-46
# The compiled GELU′ and φ (kernels.grad_block, star_block) err by at most this relative to
# the value itself: Φ's and φ's error times the cancellation of GELU′'s terms, at most 4.8x
# outside the window about x*, where the Taylor series serves. Measured against mpmath:
# 2^-50.5 at worst (x = -1.14, left of the window); tests hold it 16x inside.
DERIVATIVE_BOUND = 2.0**-45
# The compiled loops take x*'s series on -1 < x <= -0.5 (|x - x*| <= 0.2518): the table's
# two intervals there, whole
STAR_INTERVALS = (2, 3)


# RELATIVE_BOUND in units of the float64 last place of v's binade: 2^-40 of |v| is at most
# 2^13 of them. The exact value thus lies on v's side of each float32 that v is more than
# SLACK places from - of a power of two too, where float32's ulp halves: the float32s' window
# serves for both (_uncertain, kernels._judge).
SLACK = 1 << 13


def _parts(x64: np.ndarray, function: Function) -> dict[str, slice]:
    """far, tiny, high and the two middle stretches, as slices of an ascending x."""
    cut = np.searchsorted(x64, [far_left(function), -TINY, TINY, right_edge(function)], "right")
    a, b, c, d = (int(i) for i in cut)
    # searchsorted "right" puts x == -TINY in the middle and x == +TINY in the tiny part;
    # either form is exact to far below the bound there
    return {"far": slice(0, a), "mid_neg": slice(a, b), "tiny": slice(b, c),
            "mid_pos": slice(c, d), "high": slice(d, len(x64))}


def _tanh_form(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return x / (1.0 + np.exp(-2.0 * K * (x + CUBIC * x * x * x)))


def _gelu(x: np.ndarray, out: np.ndarray) -> None:
    special.ndtr(x, out=out)
    out *= x


# The float64 formula of each function between the far left and saturation, written into
# ``out`` (a part of v: no temporary to allocate and copy).
MIDDLE = {PHI: lambda x, out: special.ndtr(x, out=out), GELU: _gelu,
          GELU_TANH: lambda x, out: np.copyto(out, _tanh_form(x))}


def _uncertain(v: np.ndarray) -> np.ndarray:
    """Where the float64 value is too close, for RELATIVE_BOUND, to a float32 rounding
    midpoint (the rounding could go either way) or to a float32 (an output a whole number of
    ulps away could err by a little more or a little less: the histogram's edges; at a power
    of two, ulp(v) could halve: SLACK's comment). Integer tests on the float64 encoding: a
    float32 midpoint has the 29 dropped bits 1000...0, a float32 0000...0."""
    bits = v.view(np.int64)
    # the 28 bits below half a float32 ulp in [-SLACK, SLACK] modulo their width: shifted by
    # SLACK, at most 2·SLACK (one comparison; NumPy's int64 abs branches, far slower)
    shifted = bits + SLACK
    shifted &= (1 << (DROPPED - 1)) - 1
    doubt = shifted <= 2 * SLACK
    # below float32's normal range the quantum is fixed: test against it directly
    small = np.abs(v) < FLOAT32.smallest_normal
    if small.any():
        vs = v[small]
        steps = np.round(vs / QUANTUM)
        residual = np.abs(vs - steps * QUANTUM)
        bound = RELATIVE_BOUND * FLOAT32.smallest_normal
        # near 0 itself the side is the value's sign (_off_zero keeps it off 0)
        doubt[small] = ((residual > 0.5 * QUANTUM - bound) | ((residual < bound) & (steps != 0))
                        ) & (vs != 0)
    return doubt


def _gelu_grad(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """GELU′ = Φ + x·φ and the size of its terms |Φ| + |x·φ|, in float64."""
    cdf, density = special.ndtr(x), x * np.exp(-0.5 * x * x) * PHI0
    return cdf + density, cdf + np.abs(density)


def _gelu_tanh_grad(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(1+T)/2 + x(1-T²)u′/2 with 1+T = 2/(1+e^(-2u)) and 1-T² = 4e^(-2|u|)/(1+e^(-2|u|))²:
    no cancellation inside either term; its size |first| + |second|."""
    u = K * (x + CUBIC * x * x * x)
    with np.errstate(over="ignore", invalid="ignore"):  # the branch not taken may overflow
        first = np.where(u >= 0, 1 / (1 + np.exp(-2 * u)), np.exp(2 * u) / (1 + np.exp(2 * u)))
    e = np.exp(-2 * np.abs(u))
    second = x * 2 * e / (1 + e) ** 2 * K * (1 + 3 * CUBIC * x * x)
    return first + second, first + np.abs(second)


def _pdf(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    v = np.exp(-0.5 * x * x) * PHI0  # x² and x²/2 are exact for float32 x
    return v, v


# Around x*, where GELU′'s terms cancel, a Taylor series about x* instead: in h = x - x*
# (x* as a double-double, so h is exact to 2^-100) GELU′ = h·(c1 + c2·h + ...), whose terms
# do not cancel: 18 terms meet the mpmath reference to 2^-51 relative over |h| <= 1/4.
SERIES_WINDOW = 0.25
SERIES_TERMS = 18


@cache
def _series(function: Function) -> tuple[float, float, np.ndarray]:
    """(x* high, x* low, Taylor coefficients c1.. of the derivative about x*)."""
    assert function.derivative_of is not None, function  # (only derivatives have a series)
    x_star = minimum(get_function(function.derivative_of), 40)[0]
    with mpmath.mp.workdps(60):
        coefficients = mpmath.taylor(function.mp, x_star, SERIES_TERMS)
        high = float(x_star)
        low = float(x_star - mpmath.mpf(high))
    return high, low, np.array([float(c) for c in coefficients[1:]])


def _about_x_star(function: Function, x: np.ndarray) -> np.ndarray:
    high, low, c = _series(function)
    h = (x - high) - low  # x - high is exact (Sterbenz): both lie near -0.75
    acc = np.full_like(h, c[-1])
    for coefficient in c[-2::-1]:
        acc = acc * h + coefficient
    return acc * h


# The derivatives between the far left and their flat right: float64 value and term size.
SMOOTH = {GELU_GRAD: _gelu_grad, GELU_TANH_GRAD: _gelu_tanh_grad, PHI_GRAD: _pdf}


def _off_half(v: np.ndarray, x: np.ndarray) -> None:
    """Φ's and GELU′'s 1/2 + c·x near 0, one float64 step off 1/2 on x's side where float64
    lost the x term (ONE_DOWN's comment), in place."""
    step = np.sign(x).astype(np.int64)  # on the encoding: np.nextafter is slower
    step *= v == 0.5
    v.view(np.int64)[...] += step


def _off_zero(v: np.ndarray) -> None:
    """Values nearer 0 than TAIL_FLOOR moved out to it, their sign kept (ONE_DOWN's
    comment), in place."""
    tiny = np.abs(v) < TAIL_FLOOR
    if tiny.any():
        v[tiny] = np.copysign(TAIL_FLOOR, v[tiny])


def _below(v: np.ndarray, limit: np.ndarray | float) -> np.ndarray:
    """v kept below the float32 ``limit`` its exact value approaches from below - at most
    the float64 next to it - in place; returns where v lies within SLACK last places of it,
    where its side needs no proof."""
    top = np.nextafter(limit, -np.inf)
    np.minimum(v, top, out=v)
    return np.asarray(limit).view(np.int64) - v.view(np.int64) <= SLACK + 1


def _near_boundary(v: np.ndarray, bound: np.ndarray, above_one: np.ndarray | bool = False
                   ) -> np.ndarray:
    """Where a float64 v, within ``bound`` of the exact value, is too close to decide its
    float32 rounding - to the midpoint between its nearest float32 and the neighbour on its
    side, or to a power of two (where ulp(v) halves) unless the exact value is known to lie
    above 1 (``above_one``), as GELU′ does for x > -x* - or on which side of a whole number
    of ulps an error lies: to its nearest float32 (_uncertain)."""
    r = v.astype(np.float32).astype(np.float64)
    u = FLOAT32.ulp_of(r)
    power = (np.abs(np.frexp(r)[0]) == 0.5) & (np.abs(r) > FLOAT32.smallest_normal)
    power &= ~(above_one & (r == 1.0))
    step = np.where(power & (np.abs(v) < np.abs(r)), u / 2, u)
    mid = r + np.copysign(step / 2, v - r)
    # on a float32 whose side is known - 1 from above, 0 - v needs no proof (ONE_DOWN's comment)
    known = (above_one & (r == 1.0)) | (r == 0)
    return (np.abs(v - mid) <= bound) | ((np.abs(v - r) <= bound) & ~known)


def _fill_smooth(function: Function, x64: np.ndarray, v: np.ndarray,
                 unit: np.ndarray) -> np.ndarray:
    """v and unit of a derivative (GELU′, the tanh form′, φ) for an ascending float64 x.

    Far left the value is a zero of its sign (below 2^-200); for |x| < 2^-30 it is
    1/2 + √(2/π)·x (GELU′, both forms) or φ(0); GELU′ is 1 from above past x = 9 and φ is 0
    past 20. Between, the float64 formulas above err by at most RELATIVE_BOUND times the size
    of their terms - not of the value: GELU′'s terms cancel at x*, so there the bound is
    wide and the inputs whose rounding it leaves open are resolved."""
    a, b, c, d = (int(i) for i in np.searchsorted(
        x64, [far_left(function), -TINY, TINY, right_edge(function)], "right"))
    far, tiny, flat = slice(0, a), slice(b, c), slice(d, len(x64))
    v[far] = far_reference(function)
    unit[far] = QUANTUM
    v[flat] = right_reference(function, x64[flat])
    if function.family == PDF:
        v[tiny], unit[tiny] = PHI0, _PHI0_UNIT
        unit[flat] = QUANTUM
    else:
        v[tiny] = 0.5 + x64[tiny] * K  # √(2/π) = 2φ(0) for both forms
        _off_half(v[tiny], x64[tiny])
        unit[tiny] = np.where(x64[tiny] < 0, 2.0**-25, 2.0**-24)  # the side of 1/2: x's sign
        unit[flat] = 2.0**-23  # just above 1: the binade [1, 2)
    middle: list[slice | tuple[slice, np.ndarray]] = [slice(a, b), slice(c, d)]
    if function in COMPILED and loops.kernels():
        return np.concatenate([np.flatnonzero(_compiled_middle(function, x64[s], v[s], unit[s]))
                               + s.start for s in (slice(a, b), slice(c, d))])
    if function.family == DERIVATIVE:  # the window about x* is a part of its own
        centre = _series(function)[0]
        lo, hi = (int(i) for i in np.searchsorted(
            x64, [centre - SERIES_WINDOW, centre + SERIES_WINDOW], "right"))
        lo, hi = max(lo, a), min(hi, b)
        if hi > lo:
            middle = [slice(a, lo), slice(hi, b), slice(c, d)]
            window = slice(lo, hi)
            vw = _about_x_star(function, x64[window])
            v[window], unit[window] = vw, FLOAT32.ulp_of(vw)
            middle.append((window, np.abs(vw)))
    slow = []
    for part in middle:
        s, size = part if isinstance(part, tuple) else (part, None)
        if s.stop <= s.start:
            continue
        if size is None:
            vm, size = SMOOTH[function](x64[s])
            _off_zero(vm)
            v[s], unit[s] = vm, FLOAT32.ulp_of(vm)
        # GELU′(x) = 1 - GELU′(-x) > 1 for x > -x* (both forms): from 1.5 on the side is known
        above_one = (function.family == DERIVATIVE) & (x64[s] >= 1.5)
        if np.any(above_one):
            v[s] = np.where(above_one, np.maximum(v[s], ONE_UP), v[s])
            unit[s] = np.where(above_one, 2.0**-23, unit[s])
        slow.append(np.flatnonzero(_near_boundary(v[s], RELATIVE_BOUND * size, above_one))
                    + s.start)
    return np.concatenate(slow) if slow else np.zeros(0, np.int64)


def fill(function: Function, x64: np.ndarray, v: np.ndarray, unit: np.ndarray) -> np.ndarray:
    """v and unit for an ascending float64 x; returns the indices that need mpmath
    (SweepReference)."""
    if function in SMOOTH:
        return _fill_smooth(function, x64, v, unit)
    parts = _parts(x64, function)
    far, tiny, high = parts["far"], parts["tiny"], parts["high"]
    v[far] = far_reference(function)
    unit[far] = QUANTUM
    v[high] = right_reference(function, x64[high])
    if function.family == CDF:
        v[tiny] = 0.5 + x64[tiny] * PHI0
        _off_half(v[tiny], x64[tiny])
        # Φ = 1/2 ± |x|φ(0): the side of 1/2 is the sign of x (x = ±0: exactly 1/2)
        unit[tiny] = np.where(x64[tiny] < 0, 2.0**-25, 2.0**-24)
        unit[high] = 2.0**-24  # Φ < 1: binade [1/2, 1)
    else:
        xt, vt = x64[tiny], v[tiny]  # vt: a view, filled in place (no temporaries)
        taylor = SPECS[function].taylor
        assert taylor is not None, function  # (the GELU forms state theirs)
        np.multiply(xt, taylor, out=vt)
        vt += 0.5
        vt *= xt
        # where float64 lost the x² term (vt is x/2), one float64 ulp towards it (towards
        # +inf), on the encoding (np.nextafter costs far more here)
        step = np.where(vt > 0, 1, -1)
        step *= vt == xt * 0.5
        step *= xt != 0
        vt.view(np.int64)[...] += step
        unit[tiny] = FLOAT32.ulp_of(vt)
        # v lies just below x: the float32 ulp of x, halved where x is a power of two (v's
        # is already: the binade below)
        unit[high] = FLOAT32.ulp_of(v[high])
    slow = []
    for name in ("mid_neg", "mid_pos"):
        s = parts[name]
        if s.stop <= s.start:
            continue
        if function in COMPILED and loops.kernels():
            slow.append(np.flatnonzero(_compiled_middle(function, x64[s], v[s], unit[s]))
                        + s.start)
            continue
        vm = v[s]
        MIDDLE[function](x64[s], vm)
        if function.family != CDF and not vm.all():  # underflow keeps GELU's sign
            vm[...] = np.where(vm == 0, np.copysign(0.0, x64[s]), vm)
        _off_zero(vm)
        phi_right = function.family == CDF and name == "mid_pos"  # Φ < 1: binade [1/2, 1)
        known = np.zeros(len(vm), dtype=bool)  # on the side of the float32 approached
        if name == "mid_pos":  # below 1 (Φ) or x (GELU, both forms)
            known = _below(vm, 1.0 if phi_right else x64[s])
        unit[s] = 2.0**-24 if phi_right else FLOAT32.ulp_of(vm)
        slow.append(np.flatnonzero(_uncertain(vm) & ~known) + s.start)
    return np.concatenate(slow) if slow else np.zeros(0, np.int64)


def require(function: Function) -> None:
    """Nothing to refuse: without numba the NumPy formulas serve (SweepReference)."""


def warm(functions: tuple[Function, ...]) -> None:
    """The compiled loops of these functions (Φ's are GELU's, with a flag) made ready before
    any block is timed: each piece of the middle, the series, x*'s window, the closed forms'
    parts (SweepReference)."""
    compiled = loops.kernels()
    if compiled is None:
        return
    loops_of = {GELU if f == PHI else f for f in functions}
    middles = [f for f in COMPILED if f in loops_of]
    x32 = np.array([0.5, 0.75], dtype=np.float32)
    v, unit = np.empty(2), np.empty(2)
    # Φ's own fit (x > 0) and R's (x = -6, -9), the series' range, GELU′'s window about x*
    for x in (x32, -12 * x32[::-1], -x32[::-1], 11 * x32, -20 * x32[::-1],
              *(x32 * edge / 2 for edge, _ in compiled.SERIES_PIECES)):
        for function in middles:
            _compiled_middle(function, x, v, unit)
    if middles:  # one loop each, for all of them (sides_block: the derivatives')
        compiled.tiny_block(x32 * 2.0**-40, True, PHI0, v, unit)
    if any(f in CLOSED_FORMS for f in middles):
        compiled.outer_block(x32 * 40, -0.0, True, v, unit)
    if any(f not in CLOSED_FORMS for f in middles):
        compiled.sides_block(x32 * 40, 0.0, QUANTUM, 1.0, QUANTUM, v, unit)


def relative_bound(function: Function) -> float:
    """The bound of the fast value's error, relative (to the size of the terms, for the
    derivatives in NumPy; to the value, which is no larger, where compiled): tighter where
    the compiled loops compute it."""
    if loops.kernels() is None or function not in COMPILED or function in (GELU_TANH,
                                                                      GELU_TANH_GRAD):
        return RELATIVE_BOUND  # (the tanh form's loops compute NumPy's formulas)
    return COMPILED_BOUND if function in (PHI, GELU) else DERIVATIVE_BOUND


# From here up, Φ and |GELU| are float32 normal numbers in the middle (Φ(-12) = 1.8e-33;
# |GELU| >= 2^-30·Φ(-1) > 2^-33 for |x| >= 2^-30): the compiled loops skip the subnormal test.
NORMAL_ABOVE = -12.0


# From here on (x > 0, a whole interval of the table) Φ and GELU come within the compiled
# bound of 1 and x: 1 - Φ(7.5) = 3.2e-14 > 2^-45, further from them than the bound below
# (kernels.phi_direct's ``limited``)
LIMITED_FROM = 7.5

# What the compiled loops compute: every function of this module's (FUNCTIONS: the rows
# that name it as their sweep reference must be among them)
COMPILED = (PHI, GELU, GELU_TANH, GELU_GRAD, PHI_GRAD, GELU_TANH_GRAD)
# Those whose parts |x| <= 2^-30, far left and right fill computes in closed form, as
# kernels.tiny_block and outer_block do: Φ's (1/2 + φ(0)·x, 1) and the GELU forms' (x/2 +
# taylor·x², x)
CLOSED_FORMS = (PHI, GELU, GELU_TANH)
FUNCTIONS = COMPILED
# The tanh form's loops (kernels.tanh_block): values may be subnormal below -9.5 (the tanh
# form there is -6.7e-33, normal), and come within RELATIVE_BOUND of x from 6 on (1 - σ(2u)
# there is 1.4e-11, 2^-36 - farther below)
TANH_NORMAL_ABOVE = -9.5
TANH_LIMITED_FROM = 6.0
# where the tanh form's loops change: subnormal values below the first, the exponential's up
# to the second (phi_table.TANH_DIRECT_LEFT), σ's fit or the series up to the third
TANH_EDGES = (TANH_NORMAL_ABOVE, -phi_table.TANH_DIRECT_LEFT, TANH_LIMITED_FROM)


def _piece(x: float) -> int:
    """Which compiled loop computes x: the series with the fewest terms that its |x| allows
    (p < S, the pieces of kernels.SERIES_PIECES), or phi_direct, phi_block, grad_block or
    star_block on interval p - S of phi_table."""
    series = loops.kernels().SERIES_PIECES
    for p, (edge, _) in enumerate(series):
        if abs(x) < edge:
            return p
    return phi_table.interval(x) + len(series)


def _piece_start(p: int) -> float:
    """The smallest |x| of piece p (> 0)."""
    series = loops.kernels().SERIES_PIECES
    if p <= len(series):
        return series[p - 1][0]
    return (p - len(series)) * phi_table.INTERVAL


def _compiled_middle(function: Function, x: np.ndarray, v: np.ndarray,
                     unit: np.ndarray) -> np.ndarray:
    """The compiled loops over an ascending x of one sign between the far left and
    saturation (_right: GELU′'s flat 1, φ's zero) - or any monotone x within one piece - one
    piece (the series, or an interval of phi_table) at a time; φ in one loop. Returns the
    doubts. x is taken as contiguous float32 (the generic path's float64 copy of float32
    inputs, a reversed view): each loop is compiled for that one type, as a block passes it,
    not once more for each other (a first sweep compiled four of each, in its timed run)."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    doubt = np.empty(len(x), dtype=np.bool_)
    if not len(x):
        return doubt
    if function == PHI_GRAD:  # no table, no series: φ's exponential serves every x
        subnormal = max(abs(float(x[0])), abs(float(x[-1]))) > -NORMAL_ABOVE
        loops.kernels().grad_block(x, phi_table.R.rows()[0], 0.0, True, DERIVATIVE_BOUND, subnormal,
                             False, v, unit, doubt)
        return doubt
    if function == GELU_TANH_GRAD:  # one formula; x*'s series in its window, tanh's near 0
        cuts = [0, *sorted_cuts(x, _tanh_grad_edges(), "right"), len(x)]
        high, low, _ = _series(GELU_TANH_GRAD)
        for piece, (a, b) in enumerate(itertools.pairwise(cuts)):
            if b <= a:
                continue
            if piece == 2:
                loops.kernels().star_block(x[a:b], high, low, _star_coefficients(GELU_TANH_GRAD),
                                     RELATIVE_BOUND, v[a:b], unit[a:b], doubt[a:b])
            elif piece == 4:
                _tanh_grad_series(x[a:b], v[a:b], unit[a:b], doubt[a:b])
            else:
                loops.kernels().tanh_grad_block(x[a:b], RELATIVE_BOUND, piece == 0, piece == 6,
                                          v[a:b], unit[a:b], doubt[a:b])
        return doubt
    if function == GELU_TANH:  # the exponential's loop but between -TANH_DIRECT_LEFT and
        # TANH_LIMITED_FROM (_tanh_middle's), in a loop for each side of each edge
        cuts = [0, *sorted_cuts(x, TANH_EDGES), len(x)]
        for part, (a, b) in enumerate(itertools.pairwise(cuts)):
            if b <= a:
                continue
            if part == 2:
                _tanh_middle(x[a:b], v[a:b], unit[a:b], doubt[a:b])
            else:
                loops.kernels().tanh_block(x[a:b], RELATIVE_BOUND, part == 0, part == 3,
                                           v[a:b], unit[a:b], doubt[a:b])
        return doubt
    gelu = function == GELU
    series = loops.kernels().SERIES_PIECES
    for p, a, b in _piece_runs(x, _piece(float(x[0])), _piece(float(x[-1]))):
        k = p - len(series)
        if function == GELU_GRAD:
            _gelu_grad_piece(k, x[a:b], v[a:b], unit[a:b], doubt[a:b])
        elif k < 0:
            loops.kernels().PHI_SERIES[series[p][1]](x[a:b], gelu, COMPILED_BOUND, v[a:b],
                                               unit[a:b], doubt[a:b])
        elif k < phi_table.PHI.intervals and (
                x[a] > 0 or (k + 1) * phi_table.INTERVAL <= phi_table.DIRECT_LEFT):
            loops.kernels().phi_direct(x[a:b], phi_table.PHI.rows()[k], phi_table.centre(k), gelu,
                                 COMPILED_BOUND, bool(x[a] >= LIMITED_FROM), v[a:b], unit[a:b],
                                 doubt[a:b])
        else:
            subnormal = min(float(x[a]), float(x[b - 1])) < NORMAL_ABOVE
            loops.kernels().phi_block(x[a:b], phi_table.R.rows()[k], phi_table.centre(k), gelu,
                                COMPILED_BOUND, subnormal, v[a:b], unit[a:b], doubt[a:b])
    return doubt


def _piece_runs(x: np.ndarray, first: int, last: int) -> list[tuple[int, int, int]]:
    """(p, a, b): the non-empty runs x[a:b] of each piece p (_piece) from x[0]'s ``first``
    to x[-1]'s ``last``, in x's own order - a monotone run of one sign, in either order."""
    bounds = [0, len(x)]
    if first != last:
        edges = [_piece_start(p) for p in range(min(first, last) + 1, max(first, last) + 1)]
        bounds = [0, *magnitude_cuts(x, edges), len(x)]
    ps = range(first, last + 1) if first <= last else range(first, last - 1, -1)
    return [(p, a, b) for p, a, b in zip(ps, bounds[:-1], bounds[1:]) if b > a]


def _tanh_middle(x: np.ndarray, v: np.ndarray, unit: np.ndarray, doubt: np.ndarray) -> None:
    """The tanh form from -TANH_DIRECT_LEFT to 6, one sign, within COMPILED_BOUND: below
    TAYLOR_EDGE its series (kernels.TANH_SERIES_LOOPS, with the fewest terms each piece of
    SERIES_PIECES allows: 2^-52.1 measured), beyond it phi_direct from σ(2u)'s fit
    (phi_table.TANH), as GELU's from Φ's - no exponential, no division."""
    compiled = loops.kernels()
    series = compiled.SERIES_PIECES
    for p, a, b in _piece_runs(x, _piece(float(x[0])), _piece(float(x[-1]))):
        if p < len(series):
            compiled.TANH_SERIES_LOOPS[series[p][1]](x[a:b], COMPILED_BOUND, v[a:b], unit[a:b],
                                                     doubt[a:b])
        else:
            k = p - len(series)
            compiled.phi_direct(x[a:b], phi_table.TANH.rows()[k], phi_table.centre(k), True,
                                COMPILED_BOUND, False, v[a:b], unit[a:b], doubt[a:b])


def _tanh_grad_series(x: np.ndarray, v: np.ndarray, unit: np.ndarray,
                      doubt: np.ndarray) -> None:
    """The tanh form's derivative for 2^-30 < |x| < TAYLOR_EDGE, one sign, within
    COMPILED_BOUND: tanh's series (kernels.TANH_GRAD_SERIES_LOOPS) with the fewest terms each
    piece of SERIES_PIECES allows, as the form's own (_tanh_middle)."""
    compiled = loops.kernels()
    series = compiled.SERIES_PIECES
    for p, a, b in _piece_runs(x, _piece(float(x[0])), _piece(float(x[-1]))):
        compiled.TANH_GRAD_SERIES_LOOPS[series[p][1]](x[a:b], COMPILED_BOUND, v[a:b],
                                                      unit[a:b], doubt[a:b])


def _gelu_grad_piece(k: int, x: np.ndarray, v: np.ndarray, unit: np.ndarray,
                     doubt: np.ndarray) -> None:
    """GELU′ on one piece: the series (k < 0: piece k + S), x*'s series on STAR_INTERVALS
    left of zero, else Φ + x·φ from R's table on interval k."""
    if k < 0:
        series = loops.kernels().SERIES_PIECES
        loops.kernels().GELU_GRAD_SERIES[series[k + len(series)][1]](x, False, DERIVATIVE_BOUND, v,
                                                               unit, doubt)
    elif x[0] < 0 and k in STAR_INTERVALS:
        high, low, _ = _series(GELU_GRAD)
        loops.kernels().star_block(x, high, low, _star_coefficients(GELU_GRAD), DERIVATIVE_BOUND, v,
                             unit, doubt)
    else:
        subnormal = min(float(x[0]), float(x[-1])) < NORMAL_ABOVE
        above_one = bool(x[0] >= 1.5)  # GELU′ > 1 from -x* on: its side of 1 is known
        loops.kernels().grad_block(x, phi_table.R.rows()[k], phi_table.centre(k), False,
                             DERIVATIVE_BOUND, subnormal, above_one, v, unit, doubt)


@cache
def _star_coefficients(function: Function) -> np.ndarray:
    """The derivative's Taylor coefficients about x*, highest first, for kernels.star_block."""
    return np.ascontiguousarray(_series(function)[2][::-1])


@cache
def _tanh_grad_edges() -> tuple[float, ...]:
    """Where the tanh form's derivative's loops change (x above each: kernels.tanh_grad_block
    with subnormal values up to -9.5, x*'s window as _fill_smooth's, tanh's series for |x|
    below TAYLOR_EDGE - x above the float64 just below it is not -, its side of 1 known from
    1.5)."""
    centre, edge = _series(GELU_TANH_GRAD)[0], loops.kernels().TAYLOR_EDGE
    return (TANH_NORMAL_ABOVE, centre - SERIES_WINDOW, centre + SERIES_WINDOW, -edge,
            math.nextafter(edge, 0.0), 1.5)


def one_compiled_run(function: Function, a: float, b: float) -> bool:
    """Whether one loop of compiled_run computes a monotone run of inputs from a to b."""
    if function not in COMPILED or not loops.kernels():
        return False
    lo, hi = sorted((a, b))
    if (lo > -TINY and hi <= TINY) or _outer(function, lo, hi):
        return True  # as fill (and _fill_smooth, the derivatives') computes them
    middle = (far_left(function) < lo and hi <= -TINY) or (lo > TINY and hi <= right_edge(function))
    if function == GELU_TANH:
        return middle and all((lo < edge) == (hi < edge) for edge in TANH_EDGES)
    if function == GELU_TANH_GRAD:
        return middle and all((lo > edge) == (hi > edge) for edge in _tanh_grad_edges())
    return middle and (function == PHI_GRAD or _piece(lo) == _piece(hi))


def _outer(function: Function, a: float, b: float) -> bool:
    """Whether the inputs from a to b (either order) all lie in the far left or all right of
    saturation (for CLOSED_FORMS, fill's parts "far" and "high"): known_part's outer runs."""
    return known_kind(function, a, b) in ("far", "right")


def compiled_run(function: Function, x: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(v, unit, doubt) of a monotone run of inputs inside the tiny part, the far left or
    the right (saturation, GELU′'s flat 1, φ's 0), or inside one part of the middle and one
    piece of the compiled loops, from one loop in x's own order (no float64 copy, no
    reversal); None for any other run, or without numba."""
    if not len(x):
        return None
    first, last = float(x[0]), float(x[-1])
    if not one_compiled_run(function, first, last):
        return None
    v, unit = np.empty(len(x)), np.empty(len(x))
    compiled = loops.kernels()
    # an implementation that misses the closed forms there (torch's GELU overflows near the
    # largest float32; the tanh form's derivative is NaN for |x| beyond 2^42 in torch and
    # JAX) is measured in float64, not by mpmath
    if -TINY < first <= TINY:
        if function.family == PDF:  # φ(0)
            compiled.sides_block(x, PHI0, _PHI0_UNIT, PHI0, _PHI0_UNIT, v, unit)
        else:  # the GELU forms' x·(1/2 + c·x); Φ's 1/2 + φ(0)·x, GELU′'s 1/2 + √(2/π)·x
            gelu = function in CLOSED_FORMS and function != PHI
            taylor = SPECS[function].taylor if function in CLOSED_FORMS else K
            compiled.tiny_block(x, gelu, taylor, v, unit)
    elif _outer(function, first, last):
        if function in CLOSED_FORMS:
            compiled.outer_block(x, far_reference(function), function != PHI, v, unit)
        else:  # the derivatives' far left and flat right, as _fill_smooth fills them
            flat_unit = QUANTUM if function.family == PDF else 2.0**-23
            compiled.sides_block(x, far_reference(function), QUANTUM,
                                 float(right_reference(function, x)), flat_unit, v, unit)
    else:
        return v, unit, _compiled_middle(function, x, v, unit)
    return v, unit, np.zeros(len(x), dtype=np.bool_)  # no value there is in doubt



"""The compiled loops of erf's and erfc's sweep reference (sweep/erf_reference.py;
docs/design.md, The sweep of erf and erfc): erf's series for small |x| and its fit
(phi_table.ERF) beyond, the C library's double erfc (numba's math.erfc calls it), the
limits kept on their side, and each value's float32 unit and doubt as kernels._judge
decides them for Φ."""
import math

import numpy as np
from numba import njit

from .constants import (
    ERF_FAR,
    ERF_TINY,
    ERFC_RIGHT,
    ONE_DOWN,
    ONE_UP,
    TAIL_FLOOR,
    TWO_DOWN,
    TWO_OVER_SQRT_PI,
)
from .kernels import ONE_BITS, QUANTUM, SMALLEST_NORMAL, _horner, _judge, _judge_below
from .phi_table import ERF

if ERF.terms != 14:  # by _horner14
    raise RuntimeError(f"phi_table.ERF's term count must be 14, not {ERF.terms}")

TINY = ERF_TINY
# |x| < SERIES_EDGE: erf = 2x/√π·S(x²), S(t) = Σ (-t)^n / (n!(2n+1)), highest term first. No
# library call: the loop vectorizes, and most of the middle's encodings lie here. Below each
# edge of SERIES_PIECES the first term left out is below 2^-60 of S: with 3 terms
# t^3/42 < 2^-65 below 2^-10, with 5 t^5/1320 < 2^-60 below 2^-5, with 8 t^8/(8!·17) < 2^-67
# below SERIES_EDGE (20 of the series' 27 binades take 3 terms, and the loop a third less time).
SERIES_EDGE = 0.125
ERF_SERIES = np.array([(-1.0) ** n / (math.factorial(n) * (2 * n + 1)) for n in range(7, -1, -1)])
SERIES_PIECES = ((2.0**-10, 3), (2.0**-5, 5), (SERIES_EDGE, 8))  # (edge, terms below it)
TWO_BITS = 0x4000000000000000  # 2.0's encoding
BELOW_ONE_UNIT = 2.0**-24  # float32's ulp in [1/2, 1)
BELOW_TWO_UNIT = 2.0**-23  # in [1, 2)


@njit(cache=True, error_model="numpy")
def erf_far_block(x, v, unit, doubt):
    """erf at every x with |x| >= ERF_FAR, where it is 1 - 2.2e-17 inside (-1, 1): v kept
    just inside ±1, its side known, float32's ulp below 1 as unit, no doubt (erf_fit_block
    serves the middle below)."""
    for i in range(x.shape[0]):
        v[i], unit[i], doubt[i] = math.copysign(ONE_DOWN, x[i]), BELOW_ONE_UNIT, False


@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def _horner14(c, u):
    """The polynomial of the 14 coefficients c (highest first) at u by Horner's scheme,
    written out so that the loop around it vectorizes: its last step, c[13] + u·(...), one
    fused rounding, keeps erf's value within 2^-52 (Estrin's scheme, a tenth faster, left
    2^-51.4 - too near the check's 2^-50)."""
    s = c[0] * u + c[1]
    s = s * u + c[2]
    s = s * u + c[3]
    s = s * u + c[4]
    s = s * u + c[5]
    s = s * u + c[6]
    s = s * u + c[7]
    s = s * u + c[8]
    s = s * u + c[9]
    s = s * u + c[10]
    s = s * u + c[11]
    s = s * u + c[12]
    return s * u + c[13]


@njit(cache=True, fastmath={"contract"}, error_model="numpy", nogil=True)
def erf_fit_block(x, c, centre, bound, v, unit, doubt):
    """erf at inputs with SERIES_EDGE <= |x| < ERF_FAR in one interval of phi_table.ERF (c:
    its row there, centre: the interval's) into v, from that fit by Horner's scheme -
    no library call, so the loop vectorizes (the C library's erf costs 5 to 18 ns an input
    here, a scalar call each); float32's ulp of the exact value into unit, and whether v
    lies within ``bound`` (relative) of a float32, a rounding midpoint or a power of two
    (doubt). |erf| < 1 however close: where the value comes within the bound of ±1, v is
    kept just inside with its side known."""
    slack = np.int64(bound * 2.0**53)
    subnormal_slack = 0.5 * QUANTUM - bound * SMALLEST_NORMAL
    # in registers: read from c inside the loop, they are read again for every input (a
    # store into v might have changed them), and the loop does not vectorize
    row = (c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9], c[10], c[11], c[12],
           c[13])
    for i in range(x.shape[0]):
        xi = np.float64(x[i])
        m, u, d = _judge_below(_horner14(row, (-abs(xi) - centre) * 8.0), ONE_BITS, False,
                               slack, subnormal_slack)
        v[i], unit[i], doubt[i] = math.copysign(m, xi), u, d


@njit(cache=True, error_model="numpy")
def erfc_block(x, bound, v, unit, doubt):
    """erfc at every x with |x| >= SERIES_EDGE, from the C library (numba's math.erfc), into
    v, unit and doubt as erf_fit_block fills them: 2 less a little from -ERF_FAR down
    and wherever the value comes within the bound of 2 (x < 0), TAIL_FLOOR from ERFC_RIGHT on
    (below the quantum by far), and values below float32's normal range (x > 9.2) tested
    against its quantum."""
    slack = np.int64(bound * 2.0**53)
    subnormal_slack = 0.5 * QUANTUM - bound * SMALLEST_NORMAL
    for i in range(x.shape[0]):
        xi = np.float64(x[i])
        if xi <= -ERF_FAR:
            v[i], unit[i], doubt[i] = TWO_DOWN, BELOW_TWO_UNIT, False
        elif xi >= ERFC_RIGHT:
            v[i], unit[i], doubt[i] = TAIL_FLOOR, QUANTUM, False
        elif xi < 0:
            v[i], unit[i], doubt[i] = _judge_below(math.erfc(xi), TWO_BITS, False, slack,
                                                   subnormal_slack)
        else:
            v[i], unit[i], doubt[i] = _judge(math.erfc(xi), False, slack, subnormal_slack, True)


@njit(cache=True, error_model="numpy")
def tiny_block(x, complement, bound, subnormal, v, unit, doubt):
    """erf or erfc for |x| < TINY, in a loop of its own that vectorizes: erf = 2x/√π (its
    doubt tested; ``subnormal``: whether some |x| here is below 2^-125, where erf's value may
    be subnormal); erfc = 1 - 2x/√π, kept on x's side of 1 (the only float32 boundary that
    near: no doubt)."""
    slack = np.int64(bound * 2.0**53)
    subnormal_slack = 0.5 * QUANTUM - bound * SMALLEST_NORMAL
    for i in range(x.shape[0]):
        xi = np.float64(x[i])
        if complement:
            value = 1.0 - TWO_OVER_SQRT_PI * xi
            above = xi < 0
            v[i] = max(value, ONE_UP) if above else (min(value, ONE_DOWN) if xi > 0 else 1.0)
            unit[i] = BELOW_ONE_UNIT if xi > 0 else BELOW_TWO_UNIT
            doubt[i] = False
        else:
            v[i], unit[i], doubt[i] = _judge(TWO_OVER_SQRT_PI * xi, False, slack,
                                             subnormal_slack, subnormal)


def _series_kernel(terms):
    """The series' loop with its first ``terms``, the coefficients its constants (numba's
    disk cache keys on them; kernels._series_kernel's scheme): erf (or erfc = 1 - erf) for
    TINY <= |x| below the piece's edge, Horner's scheme in t = x² (exact for float32 x): no
    value here comes near 0, 1 or 2's float32 boundaries but through the doubt test."""
    c = ERF_SERIES[len(ERF_SERIES) - terms:].copy()

    @njit(cache=True, fastmath={"contract"}, error_model="numpy", nogil=True)
    def erf_series(x, complement, bound, v, unit, doubt):
        slack = np.int64(bound * 2.0**53)
        subnormal_slack = 0.5 * QUANTUM - bound * SMALLEST_NORMAL
        for i in range(x.shape[0]):
            xi = np.float64(x[i])
            value = TWO_OVER_SQRT_PI * xi * _horner(c, xi * xi)
            if complement:
                value = 1.0 - value
            v[i], unit[i], doubt[i] = _judge(value, False, slack, subnormal_slack, False)
    return erf_series


SERIES_LOOPS = {terms: _series_kernel(terms) for _, terms in SERIES_PIECES}

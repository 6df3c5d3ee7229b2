"""Compiled loops of the sweep (numba, the ``fast`` extra; docs/design.md, The sweep). Each
replaces several NumPy passes over a block by one, vectorized; fastref and chunk fall back to
NumPy where numba is not installed, with the same figures.

Written by hand because no library offers a vectorized float64 erfc for NumPy arrays (SciPy's
ndtr is a scalar loop, slower than NumPy's exp).

Module-level functions, so that numba's disk cache (cache=True) holds across processes. A loop
that another calls is inlined into it, not cached on its own: one compiled copy, whichever
process compiled it (_sub_blocks)."""
import math

import llvmlite.ir as ir
import mpmath
import numpy as np
from numba import njit
from numba.core import types
from numba.extending import intrinsic

from ..formats import FLOAT32
from .constants import CUBIC, DROPPED, FRACTION_MASK, ONE_DOWN, ONE_UP, PHI0, QUANTUM, TAIL_FLOOR, K
from .phi_table import PHI, R

TERMS = R.terms
if TERMS % 2:  # R is evaluated as its even and odd parts (_even_odd)
    raise RuntimeError(f"phi_table.R's term count must be even, not {TERMS}")
if PHI.terms != 14:  # Φ's by _estrin14, as exp's Taylor sum
    raise RuntimeError(f"phi_table.PHI's term count must be 14, not {PHI.terms}")


@intrinsic
def _as_float(typingctx, src):
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())
    return types.float64(types.int64), codegen


@intrinsic
def _as_int32(typingctx, src):
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(32))
    return types.uint32(types.float32), codegen


@intrinsic
def _as_float32(typingctx, src):
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.FloatType())
    return types.float32(types.uint32), codegen


@intrinsic
def _as_int(typingctx, src):
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))
    return types.int64(types.float64), codegen


TANH_SCALE = 2 * K  # 2u = TANH_SCALE·(x + CUBIC·x³), fastref's K = √(2/π) and CUBIC
INV_LN2 = 1 / math.log(2)
LN2_HI = float.fromhex("0x1.62e42fefap-1")  # 37 bits: n·LN2_HI exact for |n| < 2^16 (<= 289)
with mpmath.workdps(40):  # ln 2's bits beyond float64's too: n·LN2_LO reaches 2^-44 of r
    LN2_LO = float(mpmath.log(2) - LN2_HI)
SHIFTER = 1.5 * 2.0**52  # adding it rounds to an integer
EXP_TAYLOR = np.array([1 / math.factorial(j) for j in range(13, -1, -1)])  # 1/j!, highest first
HALF = 1 << (DROPPED - 1)
EXPONENT_FIELD = 0x7FF << 52
UNIT_FLOOR = (FLOAT32.quantum_exponent + 1023) << 52
PRECISION_SHIFT = (FLOAT32.precision - 1) << 52
SMALLEST_NORMAL = FLOAT32.smallest_normal
PHI_RIGHT_UNIT = 2.0**-24  # Φ in (1/2, 1)
ABOVE_ONE_UNIT = 2.0**-23  # GELU′ in (1, 2)
ONE_BITS = 0x3FF0000000000000  # 1.0's encoding
# 1/u for a power of two u (a unit: float32's ulp, normal in float64) is the encoding
# RECIPROCAL - u's: exact, and a multiply instead of a divide (which bounded score's loop)
RECIPROCAL = 2046 << 52


# Φ near zero: 1/2 + φ(0)·x·S(x²), S(t) = Σ (-1/2)^k t^k / (k!(2k+1)) (the series of erf),
# highest term first. Below each edge the first term left out, |x|^2k / (k!·2^k·(2k+1)), is
# below 2^-64 of S: with 3 terms |x|^6/336 < 2^-68 below 2^-10, with 5 |x|^10/42240 < 2^-65 below
# 2^-5, with 7 |x|^14/9676800 < 2^-65 below TAYLOR_EDGE. (Most of the series' inputs lie below
# 2^-10, and fewer terms are a third fewer operations there.)
TAYLOR_EDGE = 0.125
SERIES = np.array([(-0.5) ** k / (math.factorial(k) * (2 * k + 1)) for k in range(6, -1, -1)])
# GELU′ = Φ + x·φ = 1/2 + φ(0)·x·S′(x²), S′(t) = Σ (-1/2)^k t^k (2k+2)/(k!(2k+1)): each term
# 2k+2 times S's, so the first left out stays below 2^-61 of S′ at each edge
GRAD_SERIES = np.array([(-0.5) ** k * (2 * k + 2) / (math.factorial(k) * (2 * k + 1))
                        for k in range(6, -1, -1)])
SERIES_PIECES = ((2.0**-10, 3), (2.0**-5, 5), (TAYLOR_EDGE, 7))  # (edge, terms below it)


@njit(inline="always", error_model="numpy")
def _judge(value, phi_right, slack, subnormal_slack, subnormal):
    """(v, unit, doubt): float32's ulp of the exact value near ``value``, and whether value
    lies within the bound (slack: in float64 last places of its binade) of a float32 or of a
    rounding midpoint, as fastref._uncertain tests it - powers of two, where the ulp halves,
    among the float32s (fastref.SLACK's comment). ``phi_right``:
    Φ in (1/2, 1), whose ulp and side of 1/2 are known. ``subnormal``: whether value may lie
    below float32's normal range, whose test costs as much as all the rest (vectorized, both
    sides are computed); there a value nearer 0 than any other float32 is kept TAIL_FLOOR
    from it at least (fastref._off_zero), its side of 0 known - v is value but there."""
    bits = _as_int(value)
    if phi_right:
        unit = PHI_RIGHT_UNIT
    else:
        unit = _as_float(max((bits & EXPONENT_FIELD) - PRECISION_SHIFT, UNIT_FLOOR))
    half_step = _near_half_step(bits, slack)
    if subnormal and abs(value) < SMALLEST_NORMAL:  # the quantum is fixed: test against it directly
        steps = math.floor(value / QUANTUM + 0.5)
        residual = abs(value - steps * QUANTUM)
        # bitwise: `and`/`or` branches kept the loop from vectorizing
        near = (residual > subnormal_slack) | ((residual < 0.5 * QUANTUM - subnormal_slack)
                                               & (steps != 0.0))
        return math.copysign(max(abs(value), TAIL_FLOOR), value), unit, near & (value != 0.0)
    return value, unit, half_step




@njit(inline="always", error_model="numpy")
def _near_half_step(bits, slack):
    """Whether the float64 of encoding ``bits`` lies within slack of its last places of a
    float32 rounding midpoint (the dropped bits 1000...0) or of a float32 (0000...0 or, just
    below it, 1111...1): the 28 bits below half a float32 ulp near 0, modulo their width. A
    midpoint decides the rounding; a float32 decides on which side of a whole number of ulps
    an output's error lies (an output k ulps from the correctly rounded result errs by k and
    a little more, or a little less: the histogram's edges at 1, 2, 4 ...)."""
    return ((bits + slack) & (HALF - 1)) <= 2 * slack


@njit(inline="always", error_model="numpy")
def _judge_below(value, limit, phi_right, slack, subnormal_slack):
    """_judge for a value whose exact value lies below the float32 of encoding ``limit``
    however close it comes (Φ's 1, GELU's x): v kept below it - at most the float64 next to
    it - and not in doubt within slack of it, its side known (constants.ONE_DOWN's comment)."""
    value, unit, in_doubt = _judge(min(value, _as_float(limit - 1)), phi_right, slack,
                                   subnormal_slack, False)
    return value, unit, in_doubt & (limit - _as_int(value) > slack + 1)


@njit(inline="always", error_model="numpy")
def _judge_above_one(value, slack):
    """_judge for a value whose exact value lies in (1, 2) (GELU′ of both forms from 1.5 on):
    (1, 2)'s ulp, v kept above 1, not in doubt near it nor at a power of two."""
    value = max(value, ONE_UP)
    bits = _as_int(value)
    return value, ABOVE_ONE_UNIT, _near_half_step(bits, slack) & (bits - ONE_BITS > slack)


@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def _tanh_exp(xi):
    """(2u, e^(-2|u|)) of the tanh form at x, u = √(2/π)(x + 0.044715x³), as fastref's
    NumPy formulas compute them."""
    t = TANH_SCALE * (xi + CUBIC * (xi * xi) * xi)
    return t, _exp(-abs(t))


# contract: a*b + c as one fused multiply-add (the bound is measured with it)
@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def _phi_loop(x, c, centre, gelu, bound, subnormal, v, unit, doubt):
    """Φ(x) (or GELU, x·Φ(x)) for x of one sign whose -|x| lies in the interval of ``centre``
    (c: R's coefficients there), into v; float32's ulp of it into unit; and whether v lies
    within ``bound`` (relative) of a float32, of a rounding midpoint or of a power of two
    (doubt);
    ``subnormal``: whether a value may lie below float32's normal range (x < -12).

    φ = exp(-x²/2)/√(2π): x² exact for float32 x; exp by Cody-Waite reduction (n = round(t/ln 2),
    r = t - n·ln 2 in two parts) and Taylor's degree 13 on |r| <= ln2/2 (truncation below
    2^-57), 2^n added on the encoding. Q(|x|) = φ·R(-|x|); Φ = Q for x < 0, else 1 - Q.

    The loop is bound by the latency of its polynomials, not by their operations: Estrin's
    scheme for exp's and two interleaved chains for R's shorten it (Estrin for R too, no
    faster, was less accurate: 2^-50.4 against 2^-50.7 of mpmath)."""
    slack = np.int64(bound * 2.0**53)  # the bound in float64 last places of v's binade
    subnormal_slack = 0.5 * QUANTUM - bound * SMALLEST_NORMAL
    for i in range(x.shape[0]):
        xi = np.float64(x[i])
        value = _cdf(xi, _density(xi), c, centre)
        if gelu:
            value = xi * value
        v[i], unit[i], doubt[i] = _judge(value, not gelu and xi > 0, slack, subnormal_slack,
                                         subnormal)


# Each flag of a loop (subnormal, limited, above_one) a constant of a loop of its own: a flag
# passed in and tested inside the loop kept LLVM from vectorizing it, or had it compute both
# sides of the flag's branch for every input (docs/design.md, The sweep). Written out,
# module-level, one per value: closures made alike missed numba's disk cache, and
# numba.literally re-typed them in every process.
@njit(cache=True, fastmath={"contract"}, error_model="numpy", nogil=True)
def _phi_normal(x, c, centre, gelu, bound, v, unit, doubt):
    _phi_loop(x, c, centre, gelu, bound, False, v, unit, doubt)


@njit(cache=True, fastmath={"contract"}, error_model="numpy", nogil=True)
def _phi_subnormal(x, c, centre, gelu, bound, v, unit, doubt):
    _phi_loop(x, c, centre, gelu, bound, True, v, unit, doubt)


def _loop_for(subnormal, near_float, normal, subnormal_loop, near_float_loop):
    """The loop compiled for a loop's two flags: ``subnormal`` (values may be subnormal) and
    ``near_float`` (the exact value approaches 1 or x, a normal float32) - never both."""
    if subnormal and near_float:
        raise ValueError("no value that approaches 1 or x is subnormal")
    return subnormal_loop if subnormal else near_float_loop if near_float else normal


def phi_block(x, c, centre, gelu, bound, subnormal, v, unit, doubt):
    """_phi_loop, the loop compiled for ``subnormal``'s value."""
    (_phi_subnormal if subnormal else _phi_normal)(x, c, centre, gelu, bound, v, unit, doubt)


@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def _density(xi):
    """φ(x) = exp(-x²/2)/√(2π): x² exact for float32 x (phi_block)."""
    return _exp(-0.5 * xi * xi) * PHI0


@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def _exp(t):
    """e^t for -745 < t <= 0 with a normal result: Cody-Waite reduction (n = round(t/ln 2),
    r = t - n·ln 2 in two parts) and Taylor's degree 13 on |r| <= ln2/2, 2^n added on the
    encoding (phi_block)."""
    n = (t * INV_LN2 + SHIFTER) - SHIFTER
    r = (t - n * LN2_HI) - n * LN2_LO
    return _as_float(_as_int(_estrin14(EXP_TAYLOR, r)) + (np.int64(n) << 52))


@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def _cdf(xi, density, c, centre):
    """Φ(x) from φ(x) and R's coefficients c on the interval of ``centre``: Q(|x|) = φ·R(-|x|),
    Φ = Q for x < 0, else 1 - Q."""
    u = (-abs(xi) - centre) * 8.0
    tail = density * _even_odd(c, TERMS, u)  # Φ(-|x|)
    return tail if xi < 0 else 1.0 - tail


@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def _grad_loop(x, c, centre, pdf, bound, subnormal, above_one, v, unit, doubt):
    """phi_block's derivative: GELU′ = Φ + x·φ, from the same φ and R (c: R's coefficients
    on the interval of ``centre``), or φ alone (``pdf``: c and centre unused), into v, unit
    and doubt. Outside the window about x* (star_block) GELU′'s terms cancel by at most
    4.8x (at x = -1), so its error relative to the value stays within fastref's
    DERIVATIVE_BOUND. ``above_one``: every x here is 1.5 or more, where GELU′ > 1."""
    slack = np.int64(bound * 2.0**53)
    subnormal_slack = 0.5 * QUANTUM - bound * SMALLEST_NORMAL
    for i in range(x.shape[0]):
        xi = np.float64(x[i])
        density = _density(xi)
        value = density if pdf else _cdf(xi, density, c, centre) + xi * density
        if above_one:
            v[i], unit[i], doubt[i] = _judge_above_one(value, slack)
        else:
            v[i], unit[i], doubt[i] = _judge(value, False, slack, subnormal_slack, subnormal)


@njit(cache=True, fastmath={"contract"}, error_model="numpy", nogil=True)
def _grad_normal(x, c, centre, pdf, bound, v, unit, doubt):
    _grad_loop(x, c, centre, pdf, bound, False, False, v, unit, doubt)


@njit(cache=True, fastmath={"contract"}, error_model="numpy", nogil=True)
def _grad_subnormal(x, c, centre, pdf, bound, v, unit, doubt):
    _grad_loop(x, c, centre, pdf, bound, True, False, v, unit, doubt)


@njit(cache=True, fastmath={"contract"}, error_model="numpy", nogil=True)
def _grad_above_one(x, c, centre, pdf, bound, v, unit, doubt):
    _grad_loop(x, c, centre, pdf, bound, False, True, v, unit, doubt)


def grad_block(x, c, centre, pdf, bound, subnormal, above_one, v, unit, doubt):
    """_grad_loop, the loop compiled for ``subnormal``'s and ``above_one``'s values (not
    both: GELU′ > 1 is a normal number)."""
    loop = _loop_for(subnormal, above_one, _grad_normal, _grad_subnormal, _grad_above_one)
    loop(x, c, centre, pdf, bound, v, unit, doubt)


@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def _tanh_loop(x, bound, subnormal, limited, v, unit, doubt):
    """The tanh form x·σ(2u), u = √(2/π)(x + 0.044715x³), as fastref's NumPy formula computes
    it - x/(1 + e^(-2u)), or x·e^(2u)/(1 + e^(2u)) for x < 0 - with phi_block's exponential,
    into v, unit and doubt (bound: fastref.RELATIVE_BOUND, 2u's rounding times |2u| up to 143
    dominates). ``subnormal``: x below -9.5, where a value may be subnormal; ``limited``: x
    from 6 on, where the exact value comes within the bound of x, which it approaches from
    below (phi_direct's ``limited``)."""
    slack = np.int64(bound * 2.0**53)
    subnormal_slack = 0.5 * QUANTUM - bound * SMALLEST_NORMAL
    for i in range(x.shape[0]):
        xi = np.float64(x[i])
        e = _tanh_exp(xi)[1]
        value = xi / (1.0 + e) if xi >= 0 else xi * e / (1.0 + e)
        if limited:
            v[i], unit[i], doubt[i] = _judge_below(value, _as_int(xi), False, slack,
                                                   subnormal_slack)
        else:
            v[i], unit[i], doubt[i] = _judge(value, False, slack, subnormal_slack, subnormal)


@njit(cache=True, fastmath={"contract"}, error_model="numpy", nogil=True)
def _tanh_normal(x, bound, v, unit, doubt):
    _tanh_loop(x, bound, False, False, v, unit, doubt)


@njit(cache=True, fastmath={"contract"}, error_model="numpy", nogil=True)
def _tanh_subnormal(x, bound, v, unit, doubt):
    _tanh_loop(x, bound, True, False, v, unit, doubt)


@njit(cache=True, fastmath={"contract"}, error_model="numpy", nogil=True)
def _tanh_limited(x, bound, v, unit, doubt):
    _tanh_loop(x, bound, False, True, v, unit, doubt)


def tanh_block(x, bound, subnormal, limited, v, unit, doubt):
    """_tanh_loop, the loop compiled for ``subnormal``'s and ``limited``'s values."""
    _loop_for(subnormal, limited, _tanh_normal, _tanh_subnormal, _tanh_limited)(
        x, bound, v, unit, doubt)


@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def _tanh_grad_loop(x, bound, subnormal, above_one, v, unit, doubt):
    """The tanh form's derivative as fastref._gelu_tanh_grad computes it, with e = e^(-2|u|):
    σ(2u) + x·2e/(1 + e)²·√(2/π)(1 + 3·0.044715x²), bounded like it relative to the size of
    its terms, |first| + |second|: the slack is that bound in v's last places, per input
    (outside x*'s window, where star_block serves, the terms cancel by at most a few times).
    ``subnormal``: x below -9.5; ``above_one``: x above 1.5, where the value exceeds 1
    (grad_block's)."""
    for i in range(x.shape[0]):
        xi = np.float64(x[i])
        t, e = _tanh_exp(xi)
        first = 1.0 / (1.0 + e) if t >= 0 else e / (1.0 + e)
        second = xi * 2.0 * e / ((1.0 + e) * (1.0 + e)) * K * (1.0 + 3.0 * CUBIC * xi * xi)
        value = first + second
        size_bound = bound * (first + abs(second))
        field = (_as_int(value) >> 52) & 0x7FF  # v's binade: its last place 2^(field - 1075)
        slack = np.int64(size_bound * _as_float((2098 - field) << 52))
        if above_one:
            v[i], unit[i], doubt[i] = _judge_above_one(value, slack)
        else:
            v[i], unit[i], doubt[i] = _judge(value, False, slack, 0.5 * QUANTUM - size_bound,
                                             subnormal)


@njit(cache=True, fastmath={"contract"}, error_model="numpy", nogil=True)
def _tanh_grad_normal(x, bound, v, unit, doubt):
    _tanh_grad_loop(x, bound, False, False, v, unit, doubt)


@njit(cache=True, fastmath={"contract"}, error_model="numpy", nogil=True)
def _tanh_grad_subnormal(x, bound, v, unit, doubt):
    _tanh_grad_loop(x, bound, True, False, v, unit, doubt)


@njit(cache=True, fastmath={"contract"}, error_model="numpy", nogil=True)
def _tanh_grad_above_one(x, bound, v, unit, doubt):
    _tanh_grad_loop(x, bound, False, True, v, unit, doubt)


def tanh_grad_block(x, bound, subnormal, above_one, v, unit, doubt):
    """_tanh_grad_loop, the loop compiled for ``subnormal``'s and ``above_one``'s values."""
    _loop_for(subnormal, above_one, _tanh_grad_normal, _tanh_grad_subnormal,
              _tanh_grad_above_one)(x, bound, v, unit, doubt)


@njit(cache=True, fastmath={"contract"}, error_model="numpy", nogil=True)
def star_block(x, high, low, c, bound, v, unit, doubt):
    """GELU′ about x* (high + low, a double-double), where its terms cancel: h·P(h),
    h = (x - high) - low (x - high exact: both lie near -0.75), P the Taylor coefficients c
    (highest first) - accurate relative to the value, which passes through 0."""
    slack = np.int64(bound * 2.0**53)
    for i in range(x.shape[0]):
        h = (np.float64(x[i]) - high) - low
        s = c[0]
        for j in range(1, c.shape[0]):
            s = s * h + c[j]
        v[i], unit[i], doubt[i] = _judge(s * h, False, slack, 0.0, False)


@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def _phi_direct(x, c, centre, gelu, bound, limited, v, unit, doubt):
    """phi_block from Φ's own fit on the interval (c: phi_table.PHI's row there), for x > 0
    up to saturation and x < 0 down to phi_table.DIRECT_LEFT: no exponential, 14 terms
    instead of exp's 14 and R's 12, by Estrin's scheme (4 steps deep, against two Horner
    chains 7 deep; about half phi_block's time). No value there is
    subnormal. ``limited``: x > 0 so large (fastref.LIMITED_FROM) that the exact value comes
    within the bound of 1 (Φ) or x (GELU), which it approaches from below: v is kept below
    that float32 - at most the float64 next to it - and is not in doubt within slack of it,
    its side known (constants.ONE_DOWN's comment): a loop of its own (_direct_limited: a test
    per input would slow every input)."""
    slack = np.int64(bound * 2.0**53)
    subnormal_slack = 0.5 * QUANTUM - bound * SMALLEST_NORMAL
    for i in range(x.shape[0]):
        xi = np.float64(x[i])
        u = (-abs(xi) - centre) * 8.0
        tail = _estrin14(c, u)  # Φ(-|x|)
        value = tail if xi < 0 else 1.0 - tail
        if gelu:
            value = xi * value
        if limited:
            v[i], unit[i], doubt[i] = _judge_below(value, _as_int(xi) if gelu else ONE_BITS,
                                                   not gelu, slack, subnormal_slack)
        else:
            v[i], unit[i], doubt[i] = _judge(value, not gelu and xi > 0, slack,
                                             subnormal_slack, False)


@njit(cache=True, fastmath={"contract"}, error_model="numpy", nogil=True)
def _direct_free(x, c, centre, gelu, bound, v, unit, doubt):
    _phi_direct(x, c, centre, gelu, bound, False, v, unit, doubt)


@njit(cache=True, fastmath={"contract"}, error_model="numpy", nogil=True)
def _direct_limited(x, c, centre, gelu, bound, v, unit, doubt):
    _phi_direct(x, c, centre, gelu, bound, True, v, unit, doubt)


def phi_direct(x, c, centre, gelu, bound, limited, v, unit, doubt):
    """_phi_direct, the loop compiled for ``limited``'s value."""
    (_direct_limited if limited else _direct_free)(x, c, centre, gelu, bound, v, unit, doubt)


def _series_kernel(terms, series=SERIES):
    """phi_block for |x| < TAYLOR_EDGE (from 2^-30: no value is subnormal), from the
    series's first ``terms``: at most 7 operations instead of exp's 14 and R's 12 (two
    thirds of the middle's inputs lie here). One compiled loop per count, the coefficients
    its constants (numba's disk cache keys on them): a count passed in, or tested in one
    loop, kept every count at the cost of 7 terms.
    GELU′'s (``series`` GRAD_SERIES) is called with gelu False: 1/2 + φ(0)·x·S′(x²)."""
    c = series[len(series) - terms:].copy()

    @njit(cache=True, fastmath={"contract"}, error_model="numpy", nogil=True)
    def phi_series(x, gelu, bound, v, unit, doubt):
        _series_loop(x, c, gelu, bound, v, unit, doubt)
    return phi_series


@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def _series_loop(x, c, gelu, bound, v, unit, doubt):
    slack = np.int64(bound * 2.0**53)
    subnormal_slack = 0.5 * QUANTUM - bound * SMALLEST_NORMAL
    for i in range(x.shape[0]):
        xi = np.float64(x[i])
        value = 0.5 + PHI0 * xi * _horner(c, xi * xi)
        if gelu:
            value = xi * value
        v[i], unit[i], doubt[i] = _judge(value, not gelu and xi > 0, slack, subnormal_slack,
                                         False)


PHI_SERIES = {terms: _series_kernel(terms) for _, terms in SERIES_PIECES}
GELU_GRAD_SERIES = {terms: _series_kernel(terms, GRAD_SERIES) for _, terms in SERIES_PIECES}


# The tanh form near zero: x·σ(2u) = x·(1 + tanh u)/2, tanh u = u·T(u²), T(s) = Σ (-1)^k
# t_k s^k/(2k+1)! with the tangent numbers t_k, highest term first. Below each edge of
# SERIES_PIECES the first term left out is below 2^-59 of the value (u < 0.0998 below 1/8:
# 1.5e-3·u^14 with 7 terms), and 7 terms and a division fewer than the exponential's loop.
TANGENT_NUMBERS = (1, 2, 16, 272, 7936, 353792, 22368256)
TANH_SERIES = np.array([(-1) ** k * t / math.factorial(2 * k + 1)
                        for k, t in enumerate(TANGENT_NUMBERS)][::-1])


def _tanh_series_kernel(terms, derivative=False):
    """tanh_block for TAYLOR_EDGE > |x| > 2^-30 from T's first ``terms`` (_series_kernel's
    scheme: the coefficients and ``derivative`` the loop's constants); with ``derivative``,
    tanh_grad_block's there."""
    c = TANH_SERIES[len(TANH_SERIES) - terms:].copy()

    @njit(cache=True, fastmath={"contract"}, error_model="numpy", nogil=True)
    def tanh_series(x, bound, v, unit, doubt):
        _tanh_series_loop(x, c, derivative, bound, v, unit, doubt)
    return tanh_series


@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def _tanh_series_loop(x, c, derivative, bound, v, unit, doubt):
    """The tanh form x·(1 + t)/2, t = tanh u = u·T(u²); or its derivative, (1 + t)/2 +
    x·u′·(1 - t²)/2 - sech² u as 1 - tanh² u, no exponential, no division -, whose terms are
    of one sign (u′ > 0; 0.38 to 0.62 here), so bounded relative to the value as GELU′'s
    series is, in (1/2, 1) for x > 0 (Φ's ulp there)."""
    slack = np.int64(bound * 2.0**53)
    subnormal_slack = 0.5 * QUANTUM - bound * SMALLEST_NORMAL
    for i in range(x.shape[0]):
        xi = np.float64(x[i])
        u = K * (xi + CUBIC * (xi * xi) * xi)
        if derivative:
            t = u * _horner(c, u * u)
            slope = K * (1.0 + 3.0 * CUBIC * (xi * xi))  # u′
            value = 0.5 + 0.5 * t + 0.5 * xi * slope * (1.0 - t * t)
            v[i], unit[i], doubt[i] = _judge(value, xi > 0, slack, subnormal_slack, False)
        else:
            value = xi * (0.5 + 0.5 * u * _horner(c, u * u))
            v[i], unit[i], doubt[i] = _judge(value, False, slack, subnormal_slack, False)


TANH_SERIES_LOOPS = {terms: _tanh_series_kernel(terms) for _, terms in SERIES_PIECES}
TANH_GRAD_SERIES_LOOPS = {terms: _tanh_series_kernel(terms, derivative=True)
                          for _, terms in SERIES_PIECES}


@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def _even_odd(c, n, u):
    """The polynomial of the n coefficients c (highest first; n even, a constant) at u as its
    even and odd parts, two Horner chains in u² that run side by side."""
    s = u * u
    odd, even = c[0], c[1]
    for j in range(2, n, 2):  # a fixed count: unrolled
        odd = odd * s + c[j]
        even = even * s + c[j + 1]
    return even + u * odd


@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def _estrin14(c, u):
    """The polynomial of the 14 coefficients c (highest first) at u by Estrin's scheme:
    pairs in u, then pairs of those in u², u⁴, u⁸ - 4 steps deep instead of Horner's 13
    (exp's Taylor sum and Φ's fit)."""
    u2 = u * u
    u4 = u2 * u2
    q0 = c[13] + c[12] * u + (c[11] + c[10] * u) * u2
    q1 = c[9] + c[8] * u + (c[7] + c[6] * u) * u2
    q2 = c[5] + c[4] * u + (c[3] + c[2] * u) * u2
    q3 = c[1] + c[0] * u
    return q0 + q1 * u4 + (q2 + q3 * u4) * (u4 * u4)


@njit(inline="always", error_model="numpy")
def _horner(c, t):
    """The polynomial of coefficients c (highest first) at t: a fixed count, unrolled."""
    s = c[0]
    for j in range(1, len(c)):
        s = s * t + c[j]
    return s


@njit(cache=True, error_model="numpy", nogil=True)
def tiny_block(x, gelu, taylor, v, unit):
    """fastref.fill's part |x| <= 2^-30 for Φ (1/2 + φ(0)·x, one float64 step off 1/2 on
    x's side where float64 lost the x term) or the GELU forms (x·(1/2 + c·x), c φ(0) or
    √(2/π)/2 - ``taylor``, their SweepSpec's -, nudged one float64 ulp towards +inf where
    float64 lost the x² term), operation for operation (no fused multiply-add), into v and
    unit; no value there is in doubt."""
    for i in range(x.shape[0]):
        xi = np.float64(x[i])
        if gelu:
            value = (xi * taylor + 0.5) * xi
            if value == xi * 0.5 and xi != 0.0:
                value = _as_float(_as_int(value) + (1 if value > 0 else -1))
            unit[i] = _as_float(max((_as_int(value) & EXPONENT_FIELD) - PRECISION_SHIFT,
                                    UNIT_FLOOR))
        else:
            value = 0.5 + xi * taylor
            if value == 0.5 and xi != 0.0:
                value = _as_float(_as_int(value) + (1 if xi > 0 else -1))
            unit[i] = 2.0**-25 if xi < 0 else PHI_RIGHT_UNIT  # the side of 1/2: x's sign
        v[i] = value


@njit(cache=True, error_model="numpy", nogil=True)
def outer_block(x, far, gelu, v, unit):
    """fastref.fill's far left and right of saturation for Φ or GELU, value for value, into
    v and unit: the far left's ``far`` (TAIL_FLOOR with the function's sign) with the quantum
    as unit; right, the float64 below Φ's 1 (unit 2^-24) or below GELU's x, whose float32 ulp
    is halved at a power of two - the exact value lies below those, just inside the binade."""
    for i in range(x.shape[0]):
        xi = np.float64(x[i])
        if xi < 0.0:
            v[i], unit[i] = far, QUANTUM
        elif gelu:
            bits = _as_int(xi)
            ulp = _as_float((bits & EXPONENT_FIELD) - PRECISION_SHIFT)  # x is normal here
            v[i], unit[i] = _as_float(bits - 1), ulp * 0.5 if bits & FRACTION_MASK == 0 else ulp
        else:
            v[i], unit[i] = ONE_DOWN, PHI_RIGHT_UNIT


@njit(cache=True, error_model="numpy", nogil=True)
def sides_block(x, below, below_unit, above, above_unit, v, unit):
    """fastref's closed forms of the derivatives (GELU′ of both forms, φ), value for value:
    v and unit constant on each side of 0 - the far left's and the flat right's on theirs,
    φ(0)'s on both near 0 - into v and unit."""
    for i in range(x.shape[0]):
        if x[i] < 0:
            v[i], unit[i] = below, below_unit
        else:
            v[i], unit[i] = above, above_unit


@njit(inline="always", error_model="numpy")
def _error(yi, vi, ui, finite=False):
    """(|y - v|, that in ulps of ui, a power of two) of one output - inf for both where y
    is NaN - and whether y is NaN (read off its encoding: no float comparison, so the loop
    stays vectorized). ``finite``: y is known to be a number - no test."""
    nan = not finite and (_as_int32(yi) & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000)
    d = np.inf if nan else abs(np.float64(yi) - vi)
    return d, d * _as_float(RECIPROCAL - _as_int(ui)), nan


# outputs per sub-block of score: maxima are kept per sub-block, indices found in the best.
# Each sub-block ends in a dozen reductions across the vector's lanes (sums, counts, maxima):
# 1024 outputs share them (fewer were slower, more no faster)
SCORE_SUB = 1024
FLOAT32_EXPONENT = np.uint32(0x7F800000)  # a float32's exponent field: all ones for NaN, inf
TWO = np.int64(0x4000000000000000)  # 2.0's encoding
SUB = 64  # outputs per sub-block of histogram_above_four, binned only where one errs that much


# reassoc: the sum in SIMD lanes (its order differs from NumPy's pairwise sum by ~2^-40),
# in the order of the one compiled copy: inlined into score. (Compiled on its own too, it ran
# as that compile in the process that compiled both, and as score's linked copy, optimized
# apart, where numba loaded score from its cache: the same sweep's means differed in the last
# bit after an install and after.)
@njit(inline="always", fastmath={"reassoc", "nsz"}, error_model="numpy")
def _sub_blocks(y, v, unit, finite):
    """score's sums and counts over the whole sub-blocks of SCORE_SUB, the largest error and
    |y - v| as encodings, and the sub-blocks that hold them. ``finite``: assume the outputs
    are all numbers - no test per output of NaN or inf (a third of the operations), whose
    counts are then 0; the sum is not finite where that was wrong. (The end is computed here
    from the length: passed in, it kept LLVM from vectorizing. ``finite``: a constant at
    each call, score's.)"""
    n = y.shape[0]
    total = 0.0
    infinite = above_half = above_one = above_two = above_four = nans = 0
    best_e = best_d = np.int64(-1)
    at_e = at_d = 0
    for a in range(0, n - n % SCORE_SUB, SCORE_SUB):
        top_e = top_d = np.int64(-1)
        for j in range(SCORE_SUB):  # a fixed count: vectorized
            d, e, nan = _error(y[a + j], v[a + j], unit[a + j], finite)
            number = finite or e < np.inf
            total += e if number else 0.0
            infinite += np.int64(not number)
            nans += np.int64(nan)
            above_half += np.int64(e > 0.5)
            above_one += np.int64(e >= 1.0)
            top_e = max(top_e, _as_int(e))
            top_d = max(top_d, _as_int(d))
        if top_e >= TWO:  # errors of 2 ulps and more: counted in a pass of their own, made
            for j in range(SCORE_SUB):  # only where one is: most sub-blocks have
                e = _error(y[a + j], v[a + j], unit[a + j], finite)[1]  # none
                above_two += np.int64(e >= 2.0)
                above_four += np.int64(e >= 4.0)
        if top_e > best_e:
            best_e, at_e = top_e, a
        if top_d > best_d:
            best_d, at_d = top_d, a
    return (np.array([infinite, above_half, above_one, above_two, above_four, nans]), total,
            best_e, at_e, best_d, at_d)


# (fastmath: the flags of _sub_blocks, which it inlines)
@njit(cache=True, fastmath={"reassoc", "nsz"}, error_model="numpy", nogil=True)
def score(y, v, unit):
    """The comparison of y with the reference (v, unit) in one pass that writes nothing:
    the sum of the finite errors in ulps, how many are infinite, how many exceed 1/2 and are
    at least 1, 2, 4; the largest error and its first index; the largest |y - v| and its
    first index (NaN and the first NaN output, if any: np.argmax's choice). Maxima are taken
    on the encodings (non-negative floats order as integers), per sub-block of SCORE_SUB, so
    that the loop vectorizes; the first index is then found in the best sub-block. The last,
    shorter sub-block is a padded copy, with exact outputs (0 against 0) that add nothing
    and, coming last, never hold a first maximum."""
    n = y.shape[0]
    full = n - n % SCORE_SUB
    y_tail, v_tail = np.zeros(SCORE_SUB, dtype=y.dtype), np.zeros(SCORE_SUB)
    unit_tail = np.ones(SCORE_SUB)
    for i in range(n - full):  # (a slice assignment compiles numba's shape-error messages)
        y_tail[i], v_tail[i], unit_tail[i] = y[full + i], v[full + i], unit[full + i]
    # where the first output is NaN or infinite (a block of an implementation's overflow),
    # the pass that tests each at once: the first's sum would be no number
    # (``finite`` a constant at each call: passed as a variable, LLVM kept its test inside
    # the loop, which then ran at two thirds of its speed)
    finite = n == 0 or _as_int32(y[0]) & FLOAT32_EXPONENT != FLOAT32_EXPONENT
    if finite:
        counts, total, best_e, at_e, best_d, at_d = _sub_blocks(y, v, unit, True)
        tail = _sub_blocks(y_tail, v_tail, unit_tail, True)
        # a NaN or inf output: the pass that tests each. (Read off the encoding: under the
        # fastmath flags np.isfinite said True of NaN.)
        finite = _as_int(total + tail[1]) & EXPONENT_FIELD != EXPONENT_FIELD
    if not finite:
        counts, total, best_e, at_e, best_d, at_d = _sub_blocks(y, v, unit, False)
        tail = _sub_blocks(y_tail, v_tail, unit_tail, False)
    counts += tail[0]
    total += tail[1]
    if tail[2] > best_e:
        best_e, at_e = tail[2], full
    if tail[4] > best_d:
        best_d, at_d = tail[4], full
    infinite, above_half, above_one, above_two, above_four, nans = counts
    worst = largest = -1
    for i in range(at_e, min(at_e + SCORE_SUB, n)):
        if _as_int(_error(y[i], v[i], unit[i])[1]) == best_e:
            worst = i
            break
    if nans:  # as np.argmax: the first NaN
        for i in range(n):
            if _error(y[i], v[i], unit[i])[2]:
                largest = i
                break
        size = np.nan
    else:
        for i in range(at_d, min(at_d + SCORE_SUB, n)):
            if _as_int(_error(y[i], v[i], unit[i])[0]) == best_d:
                largest = i
                break
        size = _as_float(best_d)
    return (total, infinite, above_half, above_one, above_two, above_four,
            _as_float(best_e), worst, size, largest)


# the float64 exponent field of 4 (errors from 4 ulps up are binned one by one)
FOUR_FIELD = 1025


@njit(inline="always", error_model="numpy")
def _bin_above_four(yi, vi, ui, last):
    """The histogram bin of one output's error if it is 4 ulps or more, else 0."""
    field = _as_int(_error(yi, vi, ui)[1]) >> 52
    b = 0 if field < FOUR_FIELD else min(field - FOUR_FIELD + 4, last - 1)
    return last if field == 0x7FF else b


LANES = 8  # counters per bin in histogram_above_four


@njit(cache=True, error_model="numpy", nogil=True)
def histogram_above_four(y, v, unit, counts):
    """stats.histogram's bins of the errors of 4 ulps and more, added to counts: the bin
    read off the error's exponent field (4 -> bin 4, capped at the second last), inf and NaN
    outputs in the last. Per sub-block of SUB: the bins computed in a vectorized loop (0 for
    an error below 4), counted only where one is not 0: at once where all share a bin, as
    large errors mostly do, else into LANES rows of counters, output j into row j mod LANES,
    summed at the end - one row made each count wait on the one before (NumPy's errors,
    compress and sort took several times the score there)."""
    last = counts.shape[0] - 1
    kept = counts[0]  # the errors below 4 are counted there, then dropped
    bins = np.zeros(SUB, dtype=np.int64)
    rows = np.zeros((LANES, counts.shape[0]), dtype=np.int64)
    n = y.shape[0]
    for a in range(0, n - n % SUB, SUB):
        top, bottom = 0, last
        for j in range(SUB):  # a fixed count: vectorized
            bins[j] = _bin_above_four(y[a + j], v[a + j], unit[a + j], last)
            top = max(top, bins[j])
            bottom = min(bottom, bins[j])
        if top == bottom:  # one bin for all, as where errors are large they mostly are
            rows[0, top] += SUB
        elif top:
            for j in range(0, SUB, LANES):
                for lane in range(LANES):
                    rows[lane, bins[j + lane]] += 1
    for i in range(n - n % SUB, n):
        rows[0, _bin_above_four(y[i], v[i], unit[i], last)] += 1
    for lane in range(LANES):
        counts += rows[lane]
    counts[0] = kept


@njit(cache=True, nogil=True)
def encodings(out, first):
    """out = first, first + 1, ...: a block's inputs (NumPy's add of a stored range reads
    twice the memory, and np.arange is slower still)."""
    for i in range(out.shape[0]):
        out[i] = first + np.uint32(i)


# The tests of encodings below read two a step, as one 64-bit word (little-endian: its lower
# half holds the first): 64-bit lanes, no widening of a 32-bit count in every lane
# (docs/design.md, The sweep). A run that wraps past 2^32 is split there (a lower half would
# carry into its upper); an odd last encoding is tested on its own, as are strided ones.
_PAIR_STEP = np.uint64((2 << 32) | 2)  # the next pair of consecutive encodings
_LOW = np.uint64(0xFFFFFFFF)
_WRAP = 1 << 32
_NO_WORDS = np.empty(0, dtype=np.uint64)


def _words(bits):
    """bits' whole pairs as a view of 64-bit words (aligned or not: numba compiles each);
    none where bits are strided (an implementation's outputs may be a view of a wider
    array): then each is tested on its own."""
    if not bits.flags.c_contiguous:
        return _NO_WORDS
    return bits[:len(bits) // 2 * 2].view(np.uint64)


def _wraps(n, *firsts):
    """How many of n consecutive encodings come before the first of the runs from ``firsts``
    wraps past 2^32, where one does within n; else None."""
    left = [_WRAP - int(first) for first in firsts if _WRAP - int(first) < n]
    return min(left) if left else None


@njit(inline="always")
def _pair(first):
    """The word of the encodings first and first + 1 (modulo 2^32)."""
    return ((first + np.uint64(1)) & _LOW) << np.uint64(32) | first


@njit(cache=True, nogil=True)
def _constant_words(bits, words, value, mask):
    pair_value, pair_mask = value << np.uint64(32) | value, mask << np.uint64(32) | mask
    bad = np.uint64(0)
    for i in range(words.shape[0]):
        bad |= (words[i] ^ pair_value) & pair_mask
    for i in range(2 * words.shape[0], bits.shape[0]):  # an odd last one
        bad |= (np.uint64(bits[i]) ^ value) & mask
    return bad == 0


@njit(cache=True, nogil=True)
def _consecutive_words(bits, words, first):
    bad = np.uint64(0)
    expected = _pair(first)
    for i in range(words.shape[0]):
        bad |= words[i] ^ expected
        expected += _PAIR_STEP  # an upper half's carry leaves the word: modulo 2^32 there
    for i in range(2 * words.shape[0], bits.shape[0]):
        bad |= np.uint64(bits[i]) ^ ((first + np.uint64(i)) & _LOW)
    return bad == 0


@njit(cache=True, nogil=True)
def _consecutive_words_then(bits, words, first, following):
    bad = np.uint64(0)
    expected, written = _pair(first), _pair(following)
    for i in range(words.shape[0]):
        bad |= words[i] ^ expected
        words[i] = written
        expected += _PAIR_STEP
        written += _PAIR_STEP
    for i in range(2 * words.shape[0], bits.shape[0]):
        bad |= np.uint64(bits[i]) ^ ((first + np.uint64(i)) & _LOW)
        bits[i] = np.uint32((following + np.uint64(i)) & _LOW)
    return bad == 0


@njit(cache=True, nogil=True)
def _non_finite_words(bits, words):
    number = np.uint64(0)
    for i in range(words.shape[0]):  # NaN's and infinity's magnitudes: infinity's and above
        low, high = words[i] & _MAGNITUDE, (words[i] >> np.uint64(32)) & _MAGNITUDE
        number |= np.uint64(low < _INFINITY) | np.uint64(high < _INFINITY)
    for i in range(2 * words.shape[0], bits.shape[0]):  # an odd last one
        number |= np.uint64((np.uint64(bits[i]) & _MAGNITUDE) < _INFINITY)
    return number == 0


_MAGNITUDE = np.uint64(0x7FFFFFFF)
_INFINITY = np.uint64(0x7F800000)


def all_non_finite(bits):
    """Whether every encoding is a float32 NaN or infinity, of either sign and any payload
    (a block of an implementation's overflow, scored without a comparison:
    scoring.infinite_figures)."""
    return bool(_non_finite_words(bits, _words(bits)))


def constant(bits, value, mask):
    """Whether every encoding equals ``value`` in the bits of ``mask`` (0x7FFFFFFF: a zero
    of either sign where the result is a zero): a known run's results when they are one
    constant (known.Known), checked in one vectorized pass."""
    return bool(_constant_words(bits, _words(bits), np.uint64(value), np.uint64(mask)))


@njit(cache=True, nogil=True)
def _opposite_words(bits, other, words, other_words):
    bad = np.uint64(0)
    for i in range(words.shape[0]):
        bad |= words[i] ^ other_words[i] ^ _SIGNS
    for i in range(2 * words.shape[0], bits.shape[0]):  # an odd last one, or strided ones
        bad |= np.uint64(bits[i] ^ other[i] ^ _SIGN)
    return bad == 0


_SIGN = np.uint32(0x80000000)
_SIGNS = np.uint64(0x8000000080000000)


def opposite(bits, other):
    """Whether bits and other (of one length) differ in the sign bit alone, everywhere: an
    odd implementation's outputs at -x and at x (sweep/mirror.py), in one vectorized pass."""
    words, other_words = _words(bits), _words(other)
    if len(words) != len(other_words):  # one of them strided: each on its own
        words = other_words = _NO_WORDS
    return bool(_opposite_words(bits, other, words, other_words))


def consecutive(bits, first):
    """Whether bits are first, first + 1, ... (modulo 2^32), a zero's sign included: an
    implementation handed its block's inputs has not written to them; or a known run's
    results are its inputs' encodings shifted (known.Known)."""
    if (at := _wraps(len(bits), first)) is not None:
        return consecutive(bits[:at], first) and consecutive(bits[at:], 0)
    return bool(_consecutive_words(bits, _words(bits), np.uint64(first)))


def consecutive_then(bits, first, following):
    """consecutive, and bits rewritten as following, following + 1, ... in the same pass: a
    block's inputs tested intact and made the next block's (the read that tests them costs
    little more than a write of its own)."""
    if (at := _wraps(len(bits), first, following)) is not None:  # each side of it apart
        before = consecutive_then(bits[:at], first, following)
        return consecutive_then(bits[at:], (int(first) + at) % _WRAP,
                                (int(following) + at) % _WRAP) and before
    return bool(_consecutive_words_then(bits, _words(bits), np.uint64(first),
                                        np.uint64(following)))


@njit(cache=True, nogil=True)
def near_product(bits, first, slope, delta):
    """Whether bits[i] is the encoding of the float32 product slope·x_i plus delta[i], x_i
    the input of encoding first + i, at every i: a block's outputs against a source's
    (sweep/replay.py), which keeps a byte an output instead of four. (``bad`` cast back to
    32 bits each step: numba widens the or of two uint32 to 64, and the loop then widens
    every lane.)"""
    bad = np.uint32(0)
    for i in range(bits.shape[0]):
        product = _as_int32(_as_float32(first + np.uint32(i)) * slope)
        bad = np.uint32(bad | (bits[i] ^ np.uint32(product + np.int32(delta[i]))))  # mod 2^32
    return bad == 0


@njit(cache=True, nogil=True)
def product_deltas(bits, first, slope, delta):
    """near_product's delta of a block that becomes a source (sweep/replay.py), in one pass:
    delta[i] = bits[i] - the product's encoding, kept to a byte (wrapped where it is not:
    the extremes returned say so); returns (the lowest and highest exponent field of the
    outputs and products, the smallest and largest difference). Two-operand minima and
    maxima of one type: the loop vectorizes."""
    field = FLOAT32_EXPONENT
    low, high = field, np.uint32(0)
    least, most = np.int64(0), np.int64(0)
    for i in range(bits.shape[0]):
        product = _as_int32(_as_float32(first + np.uint32(i)) * slope)
        output = bits[i]
        d = np.int64(output) - np.int64(product)
        low = min(low, min(output & field, product & field))
        high = max(high, max(output & field, product & field))
        least, most = min(least, d), max(most, d)
        delta[i] = np.int8(d)
    return low >> np.uint32(23), high >> np.uint32(23), least, most

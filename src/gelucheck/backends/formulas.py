"""The textbook formulas, written once for any array module with the usual ufunc names.

Constants are made in the input's dtype, as a user writing the formula in that dtype would.
"""
from __future__ import annotations

import math

SQRT_2_OVER_PI = math.sqrt(2 / math.pi)
SQRT_HALF = math.sqrt(0.5)
CUBIC = 0.044715


def _const(xp, value, like):
    return xp.asarray(value, dtype=like.dtype)


def tanh_form(xp, x):
    """0.5·x·(1 + tanh(√(2/π)(x + 0.044715x³)))"""
    half, c, k = (_const(xp, v, x) for v in (0.5, CUBIC, SQRT_2_OVER_PI))
    return half * x * (1 + xp.tanh(k * (x + c * x * x * x)))


def phi_erf(erf, xp, x):
    """0.5·(1 + erf(x/√2))"""
    half, s = _const(xp, 0.5, x), _const(xp, SQRT_HALF, x)
    return half * (1 + erf(x * s))


def phi_erfc(erfc, xp, x):
    """0.5·erfc(-x/√2)"""
    half, s = _const(xp, 0.5, x), _const(xp, SQRT_HALF, x)
    return half * erfc(-x * s)


def gelu_tanh_fast(xp, x):
    """HF gelu_fast: 0.5·x·(1 + tanh(x·0.7978845608·(1 + 0.044715x²)))"""
    half, c, k = (_const(xp, v, x) for v in (0.5, CUBIC, 0.7978845608))
    return half * x * (1 + xp.tanh(x * k * (1 + c * x * x)))


def quick_gelu(xp, x):
    """x·σ(1.702x), σ(t) = 1/(1 + exp(-t))"""
    a = _const(xp, 1.702, x)
    return x / (1 + xp.exp(-a * x))

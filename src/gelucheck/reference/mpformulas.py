"""The functions in mpmath, at the working precision of the caller (docs/design.md,
References). The reference of record rounds these; nothing else is computed here."""
from __future__ import annotations

import mpmath

# The tanh form's cubic coefficient is the decimal 0.044715, not its nearest double.
TANH_CUBIC = "0.044715"


def phi(x):
    return mpmath.erfc(-x / mpmath.sqrt(2)) / 2


def gelu(x):
    return x * phi(x)


def gelu_tanh(x):
    # 0.5·x·(1 + tanh(u)) = x / (1 + exp(-2u)): no cancellation for negative u.
    u = mpmath.sqrt(2 / mpmath.pi) * (x + mpmath.mpf(TANH_CUBIC) * x**3)
    return x / (1 + mpmath.exp(-2 * u))


def phi_prime(x):
    return mpmath.exp(-x * x / 2) / mpmath.sqrt(2 * mpmath.pi)


def gelu_prime(x):
    return phi(x) + x * phi_prime(x)


def gelu_tanh_prime(x):
    return mpmath.diff(gelu_tanh, x)

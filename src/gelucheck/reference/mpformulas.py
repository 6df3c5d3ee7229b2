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


def _tanh_u(x):
    """u = √(2/π)(x + 0.044715x³) and du/dx."""
    c, a = mpmath.sqrt(2 / mpmath.pi), mpmath.mpf(TANH_CUBIC)
    return c * (x + a * x**3), c * (1 + 3 * a * x * x)


def gelu_tanh(x):
    # 0.5·x·(1 + tanh(u)) = x / (1 + exp(-2u)): no cancellation for negative u.
    u, _ = _tanh_u(x)
    return x / (1 + mpmath.exp(-2 * u))


def tanh_sigma(x):
    """σ(2u) = (1 + tanh u)/2, the tanh form over x (the sweep's fit of it, in
    sweep/phi_table.py)."""
    u, _ = _tanh_u(x)
    return 1 / (1 + mpmath.exp(-2 * u))


def phi_prime(x):
    """φ(x) = exp(-x²/2)/√(2π)."""
    return mpmath.exp(-x * x / 2) / mpmath.sqrt(2 * mpmath.pi)


def _gelu_prime_terms(x):
    return phi(x), x * phi_prime(x)


def gelu_prime(x):
    """GELU′(x) = Φ(x) + x·φ(x)."""
    a, b = _gelu_prime_terms(x)
    return a + b


def gelu_prime_scale(x):
    """|Φ(x)| + |x·φ(x)|: the size of the terms GELU′ adds. Near x* they cancel, so an error
    relative to them - not to GELU′ - bounds what the working precision leaves."""
    a, b = _gelu_prime_terms(x)
    return abs(a) + abs(b)


def _gelu_tanh_prime_terms(x):
    """(1+T)/2 and x(1-T²)u′/2 with T = tanh(u), written without cancellation:
    1+T = 2/(1+e^(-2u)), 1-T² = 4e^(-2|u|)/(1+e^(-2|u|))²."""
    u, du = _tanh_u(x)
    e = mpmath.exp(-2 * abs(u))
    return 1 / (1 + mpmath.exp(-2 * u)), x * 2 * e / (1 + e) ** 2 * du


def gelu_tanh_prime(x):
    """d/dx of 0.5·x·(1+tanh(√(2/π)(x + 0.044715x³)))."""
    a, b = _gelu_tanh_prime_terms(x)
    return a + b


def gelu_tanh_prime_scale(x):
    a, b = _gelu_tanh_prime_terms(x)
    return abs(a) + abs(b)


def gelu_prime2(x):
    """GELU″(x) = φ(x)(2 - x²): zero at ±√2, where GELU′ is largest."""
    return phi_prime(x) * (2 - x * x)


def gelu_tanh_prime2(x):
    return mpmath.diff(gelu_tanh_prime, x)


def erf(x):
    return mpmath.erf(x)


def erfc(x):
    return mpmath.erfc(x)

"""The functions in Arb's interval arithmetic (python-flint), written apart from mpformulas:
the independent second reference (docs/design.md, References). Each takes and returns an
``flint.arb`` ball; python-flint is imported only when a ball is made."""
from __future__ import annotations

from .mpformulas import TANH_CUBIC


def phi(a):
    import flint

    return (-a / flint.arb(2).sqrt()).erfc() / 2


def pdf(a):
    import flint

    return (-a * a / 2).exp() / (2 * flint.arb.pi()).sqrt()


def _tanh_u(a):
    import flint

    c, k = (2 / flint.arb.pi()).sqrt(), flint.arb(TANH_CUBIC)
    return c * (a + k * a**3), c * (1 + 3 * k * a * a)


def gelu_tanh(a):
    # x·σ(2u), written so that the exponential never overflows Arb's exponent range.
    u, _ = _tanh_u(a)
    if a >= 0:
        return a / (1 + (-2 * u).exp())
    e = (2 * u).exp()
    return a * e / (1 + e)


def gelu_tanh_grad(a):
    u, du = _tanh_u(a)
    e = (-2 * abs(u)).exp()
    half_one_plus_t = 1 / (1 + (-2 * u).exp()) if a >= 0 else (2 * u).exp() / (1 + (2 * u).exp())
    return half_one_plus_t + a * 2 * e / (1 + e) ** 2 * du


def gelu_tanh_series(a):
    """gelu_tanh for a power series (the search's expansions, search/expansion.py): no branch
    on the sign of x, which a series has not; Arb's exponents do not overflow, so
    x·σ(2u) = x/(1 + exp(−2u)) holds everywhere."""
    u, _ = _tanh_u(a)
    return a / (1 + (-2 * u).exp())


def gelu_tanh_grad_series(a):
    """gelu_tanh_grad for a power series: σ(2u) + x·2σ(2u)(1 − σ(2u))·u′, with 1 − σ(2u)
    written as e/(1 + e), e = exp(−2u), so that nothing cancels where σ(2u) is near 1."""
    u, du = _tanh_u(a)
    e = (-2 * u).exp()
    s = 1 / (1 + e)
    return s + a * 2 * s * (e / (1 + e)) * du


def gelu(a):
    return a * phi(a)


def gelu_grad(a):
    return phi(a) + a * pdf(a)


def erf(a):
    return a.erf()


def erfc(a):
    return a.erfc()

"""Exact rounding of a dyadic rational man * 2**exp into a format, with integer arithmetic only.

Never through ``float()`` of an mpf: mpmath up to 1.4.1 double-rounds in the subnormal range
(mpmath issue #1078). Round to nearest, ties to even, the subnormal quantum, overflow to inf.
"""
from __future__ import annotations

from fractions import Fraction

from ..formats import Format


def round_exact(man: int, exp: int, fmt: Format) -> int:
    """The encoding (as an int) of man * 2**exp correctly rounded into ``fmt``. Zero is +0."""
    sign = fmt.sign_bit if man < 0 else 0
    m = abs(man)
    if m == 0:
        return sign
    magnitude_exponent = exp + m.bit_length() - 1
    if magnitude_exponent < fmt.quantum_exponent - 1:
        return sign  # below half the smallest subnormal; spares a shift by thousands of bits
    qe = fmt.ulp_exponent(magnitude_exponent)
    if exp >= qe:
        q = m << (exp - qe)
    else:
        shift = qe - exp
        q = m >> shift
        remainder = m - (q << shift)
        half = 1 << (shift - 1)
        if remainder > half or (remainder == half and q & 1):
            q += 1  # a carry to 2**p lands on the next binade's encoding, as it should
    # In units of the quantum, the encoding is (binades above the subnormal range) << (p-1) + q.
    bits = ((qe - fmt.quantum_exponent) << (fmt.precision - 1)) + q
    infinity = ((1 << fmt.exponent_bits) - 1) << (fmt.precision - 1)
    return min(bits, infinity) | sign


def decode(bits: int, fmt: Format) -> tuple[int, int]:
    """man, exp with value man * 2**exp for a finite encoding (the inverse of round_exact)."""
    sign = -1 if bits & fmt.sign_bit else 1
    magnitude = bits & (fmt.sign_bit - 1)
    field = magnitude >> (fmt.precision - 1)
    fraction = magnitude & ((1 << (fmt.precision - 1)) - 1)
    if field == 0:
        return sign * fraction, fmt.quantum_exponent
    return sign * (fraction | (1 << (fmt.precision - 1))), fmt.quantum_exponent + field - 1


def residual_ulps(man: int, exp: int, bits: int, fmt: Format) -> float:
    """(v - rounded) / ulp(v) for v = man * 2**exp and its rounding ``bits``; in [-1/2, 1/2].

    Zero when v is representable, signed like v: a residual signed unlike the rounded value
    means "v lies inward of it" (ulp.Exact), which an exact value never does."""
    if man == 0:
        return 0.0
    qe = fmt.ulp_exponent(exp + abs(man).bit_length() - 1)
    r_man, r_exp = decode(bits, fmt)
    residual = float((Fraction(man) * Fraction(2) ** exp - Fraction(r_man) * Fraction(2) ** r_exp)
                     / Fraction(2) ** qe)
    return residual if residual or man > 0 else -0.0

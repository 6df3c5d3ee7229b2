"""Implementations for the float64 search's tests: SciPy's erf with a planted band of a few
hundred wrong encodings (below 1.0, a binade edge; and from 0.84375, glibc's seam), and a
correctly rounded erf from Arb (python-flint), independent of the search's reference."""
import numpy as np
from scipy import special

BAND = 300  # encodings
ONE = 0x3FF0000000000000
SEAM = 0x3FEB000000000000  # 0.84375


def _planted(x, first):
    y = special.erf(x)
    bits = np.abs(x).view(np.uint64)
    band = (bits >= np.uint64(first)) & (bits < np.uint64(first + BAND))
    y[band] = y[band] * (1 + 2.0**-40)  # thousands of ulps
    return y


def erf_wrong_below_one(x):
    return _planted(x, ONE - BAND)


def erf_wrong_at_seam(x):
    return _planted(x, SEAM)


def erf_correctly_rounded(x):
    from gelucheck.formats import FLOAT64
    from gelucheck.reference import arbref, mpref

    out = np.empty_like(x)
    for i, v in enumerate(x):
        bits = arbref.certify("erf", float(v), FLOAT64)
        if bits is None:
            bits = mpref.correctly_rounded("erf", float(v), FLOAT64).bits
        out[i] = FLOAT64.from_bits(bits)
    return out


def erf_infinite(x):
    """A broken erf: +inf everywhere."""
    return np.full_like(x, np.inf)

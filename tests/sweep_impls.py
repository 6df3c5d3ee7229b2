"""Implementations for the sweep tests: correct by construction, and one planted error."""
import numpy as np
from scipy import special

from gelucheck.formats import narrow

PLANTED = 0x3F812345  # the one encoding where `planted` is wrong


def rounded_once(x):
    """x·ndtr(x) in float64, rounded once: off only where float64 cannot decide a near-tie."""
    x64 = x.astype(np.float64)
    return narrow(x64 * special.ndtr(x64), "float32")


def planted(x):
    y = rounded_once(x)
    hit = x.view(np.uint32) == PLANTED
    y[hit] = np.nextafter(y[hit], np.float32(np.inf))  # one ulp up, at one input
    return y

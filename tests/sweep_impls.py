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


def dies_once(x):
    """rounded_once, except that the process dies (SIGKILL) at the planted encoding while the
    file named by $GELUCHECK_TEST_DIE_ONCE exists (removed first, so a rerun lives)."""
    import os
    import signal

    marker = os.environ.get("GELUCHECK_TEST_DIE_ONCE", "")
    if marker and os.path.exists(marker) and np.any(x.view(np.uint32) == PLANTED):
        os.remove(marker)
        os.kill(os.getpid(), signal.SIGKILL)
    return rounded_once(x)


def maybe_planted(x):
    """rounded_once, or `planted` when $GELUCHECK_TEST_PLANT is set: the same code (so the
    same source digest) before and after a regression."""
    import os

    return planted(x) if os.environ.get("GELUCHECK_TEST_PLANT") else rounded_once(x)

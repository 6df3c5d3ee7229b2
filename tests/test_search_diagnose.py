"""search/diagnose.py: the signatures around a search's worst input - the consecutive float64
inputs of its stretch, scored against mpmath - name the mechanism, and none where the
implementation is correctly rounded."""
import numpy as np
import pytest

from gelucheck.backends import Implementation
from gelucheck.search.diagnose import around, diagnose

special = pytest.importorskip("scipy.special", reason="scipy is not installed")


def test_the_stretch_is_the_encodings_on_either_side_of_the_magnitude():
    below_one = 1 - 2.0**-53  # spacing 2^-53 below 1, 2^-52 above
    assert around(1.0, 2).tolist() == [below_one - 2.0**-53, below_one, 1.0, 1 + 2.0**-52,
                                       1 + 2.0**-51]
    assert around(-1.0, 1).tolist() == [-below_one, -1.0, -1 - 2.0**-52]
    assert around(0.0, 2).tolist() == [0.0, 5e-324, 1e-323]  # none below zero's encoding
    top = np.finfo(np.float64).max
    assert around(top, 1).tolist() == [np.nextafter(top, 0), top]  # none past the largest


def _gelu(name, compute):
    return Implementation("user", name, "gelu", compute, native=("float64",))


def test_1_plus_erf_in_the_tail_reads_as_tail_cancellation():
    """0.5·x·(1 + erf(x/√2)) at x = -8.6: 1 + erf(-6.08) is 0 in float64, GELU is about
    -4e-17 (a normal number): every output lost."""
    cancels = _gelu("cancels", lambda x: 0.5 * x * (1 + special.erf(x / np.sqrt(2))))
    found = diagnose(cancels, -8.6)
    assert [s.name for s in found] == ["tail-cancellation"]
    assert found[0].count == 2049


def test_x_times_ndtr_shows_nothing_there():
    """x·Φ(x) with SciPy's ndtr (erfc in the tail): within an ulp or two, no mechanism."""
    assert diagnose(_gelu("ndtr", lambda x: x * special.ndtr(x)), -8.6) == []


def test_a_failing_implementation_is_left_to_the_search_to_report():
    def broken(x):
        raise RuntimeError("no")

    assert diagnose(_gelu("broken", broken), 1.0) is None

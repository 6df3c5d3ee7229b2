"""The sweep's exact values (sweep/reference.py, fastref, proofs): the fast reference's proven
bound, its doubts, and the inputs Arb or mpmath settle."""

import mpmath
import numpy as np
import pytest

from gelucheck.checks import reference_data
from gelucheck.formats import FLOAT32, FLOAT64
from gelucheck.reference.mpref import correctly_rounded
from gelucheck.sweep import chunk, fastref, loops, proofs, reference
from gelucheck.sweep.constants import FRACTION_MASK
from sweep_support import (
    FUNCTIONS,
    size,
)


def _bound_holds(function, x, exact):
    fast = reference.values(function, x)[0]
    scale = size(function, x, exact)
    # the fast value, or mpmath's where it was uncertain: within the bound (plus float64's
    # own rounding of the exact value)
    bound = reference.relative_bound(function)
    return np.abs(fast - exact) <= bound * scale + 2.0**-53 * np.abs(exact)


@pytest.mark.parametrize("function", FUNCTIONS)
def test_bound_holds_on_the_stored_reference(function, sweep_path):
    tab = reference_data.table("float32", "gelu")
    ok = _bound_holds(function, tab.x, tab.exact(function))
    assert ok.all(), tab.x[~ok][:5]


@pytest.mark.parametrize("function", FUNCTIONS)
def test_bound_holds_on_a_fresh_random_sample_against_mpmath(function, sweep_path):
    """1,500 random encodings (every binade equally likely) and 1,500 values in [-15, 15]."""
    rng = np.random.default_rng(2026)
    bits = rng.integers(0, 0xFF800000, 1500, dtype=np.uint64).astype(np.uint32)
    bits = bits[(bits < 0x7F800000) | (bits >= 0x80000000)]
    x = np.concatenate([bits.view(np.float32), rng.uniform(-15, 15, 1500).astype(np.float32)])
    x = np.sort(x)
    exact = np.array([float(FLOAT64.from_bits(correctly_rounded(function, float(v), FLOAT32)
                                              .float64_bits)) for v in x])
    ok = _bound_holds(function, x, exact)
    assert ok.all(), x[~ok][:5]


def test_measured_worst_error_is_well_inside_the_bound(sweep_path):
    """The margin the docstrings promise: the fast float64 path is 2^4 or more inside."""
    tab = reference_data.table("float32", "gelu")
    for function in FUNCTIONS:
        v = reference.values(function, tab.x)[0]
        e = tab.exact(function)
        rel = np.abs(v - e) / size(function, tab.x, e)
        assert rel.max() < reference.relative_bound(function) / 16, function


def test_units_agree_with_the_stored_residuals(sweep_path):
    """float32's ulp of the exact value, from the fast path, is the one the stored
    (rounded, residual) pair implies - at powers of two and around 1/2 included."""
    from gelucheck.ulp import _ulp_of_exact

    tab = reference_data.table("float32", "gelu")
    for function in FUNCTIONS:
        _, unit, _ = reference.values(function, tab.x)
        exact = reference_data.exact(tab, function)
        assert np.array_equal(unit, _ulp_of_exact(exact, FLOAT32)), function


@pytest.mark.parametrize("function", ["gelu_grad", "gelu_tanh_grad"])
def test_the_series_about_x_star_is_exact_to_far_below_the_bound(function):
    """Around x*, where the formula's terms cancel, the Taylor series is accurate relative to
    the value itself (2^-51 measured): so fractional ulps stay good there too."""
    from gelucheck.functions import get_function

    f = get_function(function)
    centre = fastref._series(f)[0]
    tab = reference_data.table("float32", "gelu")
    x64 = tab.x.astype(np.float64)
    near = np.abs(x64 - centre) < fastref.SERIES_WINDOW
    v = fastref._about_x_star(f, x64[near])
    e = tab.exact(f)[near]
    assert near.sum() > 5000
    assert np.max(np.abs(v - e) / np.abs(e)) < 2.0**-48


def test_mpmath_is_the_fallback_near_midpoints():
    """An input whose float64 value lies within the bound of a float32 midpoint is resolved
    by mpmath: GELU(x) for a subnormal odd x is a hair above the tie x/2 (by x²φ(0))."""
    x = FLOAT32.from_bits(np.array([0x00000003, 0x80000003], dtype=np.uint32))
    v, unit, _ = reference.values("gelu", x)
    with mpmath.mp.workprec(400):
        exact = [mpmath.mpf(float(t)) * mpmath.ncdf(mpmath.mpf(float(t))) for t in x]
    for vi, e, xi in zip(v, exact, x):
        assert (vi > float(xi) / 2) == (e > mpmath.mpf(float(xi)) / 2)
    assert np.all(unit == 2.0**-149)


@pytest.mark.parametrize("function", FUNCTIONS)
def test_arb_and_mpmath_resolve_the_close_calls_alike(function, monkeypatch):
    """The inputs whose float64 value is too close to call go to Arb where python-flint is
    installed, else to mpmath: both give the same float32, float64 and side, on every such
    input of four blocks (4 to 20 a function, by the NumPy reference's wider bound)."""
    from gelucheck.functions import get_function

    monkeypatch.setattr(loops, "kernels", lambda: None)
    f = get_function(function)
    close = []
    for start in (0x3F900000, 0xBF900000, 0xC0900000, 0xBF400000):
        x = np.arange(start, start + chunk.BLOCK, dtype=np.uint32).view(np.float32)
        x64 = np.sort(x.astype(np.float64))
        v, unit = np.empty_like(x64), np.empty_like(x64)
        close += x64[fastref.fill(f, x64, v, unit)].tolist()
    assert len(close) >= 3
    for xi in close:
        mp = correctly_rounded(f, xi, FLOAT32)
        bits, bits64, side = proofs.arbref.rounded(f, xi, FLOAT32)
        assert (bits, bits64) == (mp.bits, mp.float64_bits), xi
        assert np.sign(side) == np.copysign(1.0, mp.residual), xi


def test_the_reference_without_arb_is_the_same(monkeypatch):
    """Without python-flint the close calls go to mpmath: the reference is bit for bit the same
    (the NumPy reference, whose wider bound leaves close calls in one block)."""
    monkeypatch.setattr(loops, "kernels", lambda: None)
    x = np.arange(0xC0900000, 0xC0900000 + chunk.BLOCK, dtype=np.uint32).view(np.float32)
    with proofs.afresh():  # each proven here, none read from the table
        with_arb = reference.values("gelu", x, monotone=True)
        monkeypatch.setattr(proofs, "arb_installed", lambda: False)
        without = reference.values("gelu", x, monotone=True)
    assert with_arb[2] == without[2] > 0
    for a, b in zip(with_arb[:2], without[:2]):
        assert np.array_equal(a.view(np.int64), b.view(np.int64))


def test_uncertain_is_its_definition_at_every_edge():
    """fastref._uncertain tests its ranges by one comparison modulo their width; on encodings
    at and beside every edge of the ranges (both signs, random exponents) it flags exactly
    what the two-sided definition does: the 29 bits below float32's last place within SLACK
    of a midpoint or of a float32 (0, or all ones just below the next)."""
    slack, width, mask = fastref.SLACK, fastref.DROPPED, FRACTION_MASK
    half, full = 1 << (width - 1), 1 << width
    rng = np.random.default_rng(7)
    offsets = [0, slack - 1, slack, slack + 1, mask - slack - 2, mask - slack - 1, mask - slack,
               mask]
    for high in rng.integers(0, 1 << (52 - width), 40).tolist():
        for low in (half - slack - 1, half - slack, half - slack + 1, half, half + slack - 1,
                    half + slack, half + slack + 1, 0, slack, slack + 1, full - slack - 1,
                    full - slack, full - 1, half // 2):
            offsets.append((high << width) | low)
    exponents = rng.integers(897, 2046, 300).astype(np.int64) << 52  # normal float32 range
    bits = (exponents[:, None] | np.array(offsets, dtype=np.int64)[None, :]).reshape(-1)
    bits = np.concatenate([bits, bits | np.int64(-(2**63))])
    v = bits.view(np.float64)
    dropped = bits & ((1 << width) - 1)
    want = ((dropped >= half - slack) & (dropped <= half + slack)) | (dropped <= slack) | (
        dropped >= full - slack)
    got = fastref._uncertain(v)
    assert np.array_equal(got, want)
    assert 0 < want.sum() < len(want)


@pytest.mark.parametrize("count", [0, 1, 2, reference.FEW - 1, reference.FEW,
                                   reference.FEW + 1, 300])
@pytest.mark.parametrize("size_", [1, 9, 1 << 12])
def test_a_blocks_doubts_are_flatnonzeros(count, size_):
    """_doubts finds the doubts one by one where they are few, flatnonzero's indices either
    way: at the ends, adjacent, and past FEW."""
    rng = np.random.default_rng(count * 31 + size_)
    for picked in (rng.integers(0, size_, count), np.arange(min(count, size_)),
                   size_ - 1 - np.arange(min(count, size_))):
        doubt = np.zeros(size_, dtype=bool)
        doubt[picked] = True
        found = reference._doubts(doubt)
        assert found.dtype == np.int64
        assert found.tolist() == np.flatnonzero(doubt).tolist()

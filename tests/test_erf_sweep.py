"""The exhaustive float32 sweep of erf and erfc: its fast reference within its bound, the
figures of a sweep equal to mpmath's, input for input, at every edge of the reference, and
a clear refusal where the reference cannot be trusted."""
import itertools
import math

import mpmath
import numpy as np
import pytest

from gelucheck.backends import find, load_user
from gelucheck.cli import main
from gelucheck.errors import UsageError
from gelucheck.functions import ERF, ERFC, get_function
from gelucheck.sweep import chunk, erf_reference, loops, phi_table, stats
from sweep_support import plain

pytest.importorskip("numba", reason="the erf family's sweep reference is compiled (numba)")


def _exact(function, x) -> list:
    f = get_function(function)
    with mpmath.workdps(60):
        return [f.mp(mpmath.mpf(float(xi))) for xi in x]


def _relative_errors(function, x):
    v, unit = np.empty(len(x)), np.empty(len(x))
    erf_reference.fill(get_function(function), x, v, unit)
    exact = _exact(function, x)
    with mpmath.workdps(60):
        return np.array([float(abs(mpmath.mpf(float(vi)) - e) / abs(e)) if e > 2.0**-200 else 0
                         for vi, e in zip(v.tolist(), exact)])


@pytest.mark.parametrize("function", ["erf", "erfc"])
def test_the_fast_reference_is_well_inside_its_bound_against_mpmath(function):
    """1,500 encodings with every binade equally likely, 1,500 values across the middle: the
    float64 values within BOUND/16 of mpmath's (glibc's double erf: about 2^-53)."""
    rng = np.random.default_rng(37)
    top = {"erf": 6.0, "erfc": 12.0}[function]
    by_binade = np.ldexp(rng.uniform(1, 2, 1500), rng.integers(-149, 4, 1500))
    by_binade *= rng.choice([-1, 1], 1500)
    x = np.concatenate([by_binade, rng.uniform(-6.5, top + 0.5, 1500)]).astype(np.float32)
    x = np.sort(x[np.abs(x) < top])  # ascending, as the reference takes them
    worst = _relative_errors(function, x).max()
    assert worst <= erf_reference.BOUND / erf_reference.CHECK_MARGIN, worst


@pytest.mark.parametrize("function", [ERF, ERFC])
def test_the_library_check_passes_here_and_says_where_it_is_worst(function):
    worst, at = erf_reference.library_error(function)
    assert 0 < worst <= erf_reference.BOUND / erf_reference.CHECK_MARGIN
    assert np.isfinite(at)


@pytest.mark.parametrize(("function", "backend", "middle"), [
    ("erf", "libm:erff", "erf's fit (phi_table.ERF)"),
    ("erfc", "libm:erfcf", "the C library's double erfc"),
])
def test_a_reference_beyond_the_bound_is_refused_before_any_work(monkeypatch, capsys,
                                                                  function, backend, middle):
    monkeypatch.setattr(erf_reference, "library_error", lambda f: (2.0**-40, 1.5))
    assert main(["sweep", "--backend", backend, "--function", function, "--range",
                 "3f800000:3f800010", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert middle in err and "x = 1.5" in err


def test_erfs_fit_is_within_2_to_the_minus_51_on_every_interval():
    """erf's middle, 1/8 <= |x| < 6, comes from phi_table.ERF (erf_kernels.erf_fit_block):
    against mpmath, 40 float32 inputs across each of its 24 intervals, the float32s either
    side of each edge, both signs - within 2^-51 relative, 32 times inside the sweep's bound
    (its check allows 16 times)."""
    magnitudes = [np.float32(0.125), np.nextafter(np.float32(6.0), np.float32(0))]
    for k in range(phi_table.ERF.intervals):
        lo, hi = max(k * phi_table.INTERVAL, 0.125), (k + 1) * phi_table.INTERVAL
        magnitudes += list(np.linspace(lo, hi, 40, endpoint=False).astype(np.float32))
        edge = np.float32(hi)
        magnitudes += [np.nextafter(edge, np.float32(0)), edge]
    magnitudes = np.unique(np.array(magnitudes, dtype=np.float32))
    magnitudes = magnitudes[magnitudes < 6.0]
    x = np.sort(np.concatenate([-magnitudes, magnitudes]))
    worst = _relative_errors("erf", x).max()
    assert worst <= 2.0**-51, math.log2(worst)


@pytest.mark.parametrize("function", ["erf", "erfc"])
def test_the_series_pieces_are_within_2_to_the_minus_51_either_side_of_each_edge(function):
    """Below 1/8 erf's series takes 3, 5 or 8 terms by |x| (erf_kernels.SERIES_PIECES): the
    40 float32s either side of each piece's edge and 200 across each piece, both signs, within
    2^-51 of mpmath (their roundings: 2^-51.9 with all 8 terms), 32 times inside the sweep's
    bound - with the terms of the piece below, erf errs by 2^-35 to 2^-40 past an edge."""
    compiled = loops.erf_kernels()
    edges = [compiled.TINY] + [edge for edge, _ in compiled.SERIES_PIECES]
    magnitudes = []
    for lo, hi in itertools.pairwise(edges):
        magnitudes += list(np.geomspace(lo, hi, 200, endpoint=False).astype(np.float32))
    for edge in edges[1:]:
        at = int(np.float32(edge).view(np.uint32))
        magnitudes += list(np.arange(at - 40, at + 40, dtype=np.uint32).view(np.float32))
    magnitudes = np.unique(np.array(magnitudes, dtype=np.float32))
    x = np.sort(np.concatenate([-magnitudes, magnitudes]))
    worst = _relative_errors(function, x).max()
    assert worst <= 2.0**-51, math.log2(worst)


def test_without_numba_the_erf_sweep_is_refused_with_the_reason(monkeypatch):
    monkeypatch.setattr(loops, "kernels", lambda: None)
    with pytest.raises(UsageError, match="without numba"):
        erf_reference.require(ERF)


# Blocks of 1,024 encodings across every edge of the reference: (function, first encoding)
_F32 = lambda x: int(np.float32(x).view(np.uint32))
EDGES = {
    "erf tiny": ("erf", 0x2C000000), "erf subnormal x": ("erf", 0x00000200),
    "erf -subnormal x": ("erf", 0x80000200), "erf at 2^-30": ("erf", _F32(2.0**-30) - 512),
    "erf = 1/2": ("erf", _F32(0.4769363) - 512), "erf rounds to 1": ("erf", _F32(3.9192) - 512),
    "erf float64 1": ("erf", _F32(5.9215) - 512), "erf at 6": ("erf", _F32(6.0) - 512),
    "erf -1": ("erf", _F32(-3.9192) - 512), "erf series edge": ("erf", _F32(0.125) - 512),
    "erf -series edge": ("erf", _F32(-0.125) - 512),
    "erf series 3|5 terms": ("erf", _F32(2.0**-10) - 512),
    "erf -series 5|8 terms": ("erf", _F32(-(2.0**-5)) - 512),
    "erfc series 5|8 terms": ("erfc", _F32(2.0**-5) - 512),
    "erfc -series 3|5 terms": ("erfc", _F32(-(2.0**-10)) - 512),
    "erf fit edge": ("erf", _F32(1.25) - 512), "erf -fit edge": ("erf", _F32(-2.75) - 512),
    "erfc series edge": ("erfc", _F32(0.125) - 512),
    "erfc -series edge": ("erfc", _F32(-0.125) - 512),
    "erfc at 2^-30": ("erfc", _F32(2.0**-30) - 512),
    "erfc -2^-30": ("erfc", _F32(-(2.0**-30)) - 512), "erfc = 1/2": ("erfc", _F32(0.4769363) - 512),
    "erfc = 3/2": ("erfc", _F32(-0.4769363) - 512), "erfc subnormal": ("erfc", _F32(9.194) - 512),
    "erfc underflow": ("erfc", _F32(10.0542) - 512), "erfc to 2": ("erfc", _F32(-3.9192) - 512),
    "erfc tail floor": ("erfc", _F32(11.65) - 512), "erfc at 12": ("erfc", _F32(12.0) - 512),
}


def _mp_figures(function, x, y) -> dict:
    """max ulp, the count above 1/2 ulp, the histogram and the sum, from mpmath alone: the
    bins decided on mpmath's errors (1 - 1e-19 ulp is in (1/2, 1), not 1)."""
    errors, histogram = [], [0] * stats.BINS
    with mpmath.workdps(60):
        for e, yi in zip(_exact(function, x), y.tolist()):
            binade = max(int(mpmath.floor(mpmath.log(abs(e), 2))), -126) if e else -126
            error = abs(mpmath.mpf(yi) - e) / mpmath.ldexp(1, binade - 23)
            errors.append(float(error))
            if error <= 0.5:
                histogram[0] += 1
            else:
                k = int(mpmath.floor(mpmath.log(error, 2)))  # error in [2^k, 2^(k+1))
                histogram[min(max(k + 2, 1), stats.BINS - 2)] += 1
    errors = np.array(errors)
    return {"max_ulp": errors.max(), "not_correctly_rounded": histogram_above(histogram),
            "histogram": histogram, "sum_ulp": errors.sum()}


def histogram_above(histogram) -> int:
    return sum(histogram[1:])



@pytest.mark.slow
@pytest.mark.parametrize("where", sorted(EDGES))
def test_sweep_figures_are_mpmaths_at_every_edge(where):
    """The C library's float function, the same one ulp up at every fifth input, and SciPy's
    double rounded once (correctly rounded but for near-ties): max ulp, the count not
    correctly rounded, the histogram and the sum equal to mpmath's, input for input."""
    function, start = EDGES[where]
    x = np.arange(start, start + 1024, dtype=np.uint32).view(np.float32)
    c_name = "erff" if function == "erf" else "erfcf"
    impls = [find(f"libm:{c_name}")[0], load_user(f"sweep_impls:{c_name}_one_up", function),
             load_user(f"sweep_impls:{function}_scipy_once", function)]
    got = plain(chunk.evaluate(impls, function, start, start + 1024))["implementations"]
    for impl in impls:
        figures = got[f"{impl.id}/{function}"]
        want = _mp_figures(function, x, impl(x.copy()))
        assert figures["not_correctly_rounded"] == want["not_correctly_rounded"], impl.id
        assert figures["histogram"] == want["histogram"], impl.id
        assert figures["max_ulp"] == pytest.approx(want["max_ulp"], rel=2.0**-16, abs=2.0**-16)
        assert figures["sum_ulp"] == pytest.approx(want["sum_ulp"], rel=2.0**-16, abs=2.0**-10)


@pytest.mark.slow  # seconds of workers or whole commands: CI runs it after the suite
def test_a_sweep_of_erf_over_an_edge_is_correct_for_the_correctly_rounded(capsys):
    """SciPy's double erf rounded once across erf's rounding to 1: every output within half
    an ulp but for near-ties, and the command says so."""
    assert main(["sweep", "--backend", "libm:erff", "--function", "erf", "--range",
                 f"{_F32(3.9192) - 4096:08x}:{_F32(3.9192) + 4096:08x}", "--no-progress",
                 "--workers", "1"]) == 0
    assert "libm:erff erf float32" in capsys.readouterr().out

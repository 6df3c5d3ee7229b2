"""The sweep's compiled loops (sweep/kernels.py, numba): the compiled Φ, GELU, φ and GELU′
against mpmath, the coefficient table, the close calls they leave, and the same figures as
the NumPy passes that stand in without numba."""
import ast
import inspect
import itertools
import json
import math
import os
import subprocess
import sys

import mpmath
import numpy as np
import pytest

from gelucheck.errors import ReferenceDataError
from gelucheck.formats import FLOAT32
from gelucheck.functions import get_function
from gelucheck.reference.mpref import correctly_rounded
from gelucheck.sweep import (
    chunk,
    edges,
    erf_reference,
    fastref,
    loops,
    phi_table,
    reference,
    scoring,
)
from gelucheck.sweep.known import known_part
from sweep_support import plain


def _kernels():
    k = loops.kernels()
    if k is None:
        pytest.skip("numba is not installed (pip install 'gelucheck[fast]'): no compiled loops")
    return k


def _phi_block(function, x):
    """The compiled loop over an ascending float32 x of one sign, interval by interval of the
    table: (v, unit, doubt)."""
    _kernels()
    v, unit = np.empty(len(x)), np.empty(len(x))
    doubt = fastref._compiled_middle(get_function(function), x, v, unit)
    return v, unit, doubt


# GELU′'s terms cancel most at the window about x*'s edges (x = -1, -0.5), and not at all
# at x*: the float32s nearest it, and those edges (x*'s series inside, Φ + x·φ outside)
X_STAR = [-0.75179154, -0.75179148, -0.7517915, -1.0000001, -1.0, -0.99999994, -0.50000006,
          -0.5, -0.49999997]


@pytest.mark.slow  # seconds of workers or whole commands: CI runs it after the suite
@pytest.mark.parametrize("function", ["phi", "gelu", "gelu_tanh", "phi_grad", "gelu_grad"])
def test_compiled_loops_are_16_times_inside_their_bound(function):
    """Against mpmath at 40 digits, relative to the value, every interval of the table, both
    signs: random inputs, both ends of each interval, where the exponential's argument
    reduction once lost bits (x near -20, n·ln 2 with |n| > 256) and, for GELU′, about x*."""
    f = get_function(function)
    _kernels()
    rng = np.random.default_rng(7)
    worst = 0.0
    if f.name == "gelu_grad":
        worst = _worst_relative(f, np.array(X_STAR, dtype=np.float32))
    for k in range(phi_table.R.intervals):
        lo, hi = k * phi_table.INTERVAL, (k + 1) * phi_table.INTERVAL
        inside = rng.uniform(lo, hi, 10).astype(np.float32)
        ends = np.array([lo, np.nextafter(np.float32(hi), np.float32(0))], dtype=np.float32)
        magnitudes = np.concatenate([inside, ends, [19.955046, 19.933563]])
        magnitudes = magnitudes[(magnitudes >= max(lo, reference.spec(f).known_tiny))
                                & (magnitudes < hi)].astype(np.float32)
        for sign in (-1, 1):
            x = (sign * magnitudes).astype(np.float32)
            if sign > 0:
                x = x[x <= edges.right_edge(f)]
            if len(x):
                worst = max(worst, _worst_relative(f, x))
    assert worst < reference.relative_bound(f) / 16, math.log2(worst)


def _worst_relative(f, x):
    """The largest error of the compiled loops at the float32 inputs x (one sign), relative
    to mpmath's value at 40 digits - where that is TAIL_FLOOR or more: below, the value is
    kept TAIL_FLOOR from 0 with the exact value's sign (fastref.ONE_DOWN's comment), within
    the bound's absolute part, 2^-126 of it."""
    x = np.sort(x)
    v, _, _ = _phi_block(f.name, x)
    worst = 0.0
    with mpmath.workdps(40):
        for xi, vi in zip(x.tolist(), v.tolist()):
            exact = f.mp(mpmath.mpf(xi))
            if abs(exact) >= fastref.TAIL_FLOOR:
                worst = max(worst, float(abs((vi - exact) / exact)))
            else:
                assert vi == math.copysign(fastref.TAIL_FLOOR, exact), xi
    return worst


def test_the_derivatives_bound_is_relative_to_the_value_and_tighter_than_numpys():
    """The compiled GELU′ and φ are bounded relative to the value (no larger than the size of
    GELU′'s terms, to which NumPy's 2^-40 is relative): what the sweep's tests of the bound
    take it as."""
    _kernels()
    for name in ("phi_grad", "gelu_grad"):
        assert reference.relative_bound(name) == fastref.DERIVATIVE_BOUND < fastref.RELATIVE_BOUND


def test_gelu_grad_right_of_one_and_a_half_leaves_no_close_call_at_one():
    """GELU′ > 1 from x = -x* on, and its float64 value is 1 itself from about x = 8.3: told
    that the exact value lies above 1 (from 1.5), the loop leaves none of [8, 9) in doubt
    as close to a power of two (else about 2^20 calls to Arb), with 1's binade's ulp."""
    x = np.arange(0x41000000, 0x41000000 + (1 << 20), dtype=np.uint32).view(np.float32)
    v, unit, doubt = _phi_block("gelu_grad", x)
    assert (v[-1000:] == fastref.ONE_UP).all() and (v > fastref.ONE_UP).any()
    assert not doubt.any() and (unit == 2.0**-23).all()


@pytest.mark.parametrize("function, limit", [("phi", np.ones_like), ("gelu", lambda x: x)])
def test_phi_and_gelu_from_7_5_leave_no_close_call_at_1_or_x(function, limit):
    """Φ and GELU approach 1 and x from below, and their float64 values reach them near 9:
    kept below (phi_direct_limited), none of [8, 9) is left in doubt as close to that
    float32 (else about 2^20 calls to Arb)."""
    x = np.arange(0x41000000, 0x41000000 + (1 << 20), dtype=np.uint32).view(np.float32)
    v, _, doubt = _phi_block(function, x)
    top = np.nextafter(limit(x.astype(np.float64)), -np.inf)
    assert (v <= top).all() and (v[-1000:] == top[-1000:]).all()
    assert not doubt.any()


@pytest.mark.parametrize("function", ["phi", "gelu", "gelu_tanh", "phi_grad", "gelu_grad",
                                      "gelu_tanh_grad"])
def test_the_series_near_zero_is_16_times_inside_the_bound(function):
    """|x| < 1/8 is computed from erf's series (kernels.PHI_SERIES, 3 to 7 terms; GELU′'s
    from its own, GELU_GRAD_SERIES; the tanh form's and its derivative's from tanh's,
    TANH_SERIES_LOOPS and TANH_GRAD_SERIES_LOOPS, within COMPILED_BOUND though their bound
    is wider; φ from its exponential): against
    mpmath at 40 digits,
    log-uniform over every binade from 2^-30 (the middle's start) up, both signs, in one run
    that crosses each cut where a term is added and, at 1/8, into the table; either side of
    each cut."""
    _kernels()
    f = get_function(function)
    rng = np.random.default_rng(8)
    edges = [np.float32(edge) for edge, _ in loops.kernels().SERIES_PIECES]
    magnitudes = np.concatenate([2.0 ** rng.uniform(-30, -3, 400), [0.13, 2.0**-30],
                                 *([np.nextafter(e, np.float32(0)), e] for e in edges)])
    magnitudes = np.unique(magnitudes.astype(np.float32))
    worst = max(_worst_relative(f, (sign * magnitudes).astype(np.float32)) for sign in (-1, 1))
    bound = (fastref.COMPILED_BOUND if function in ("gelu_tanh", "gelu_tanh_grad")
             else reference.relative_bound(f))
    assert worst < bound / 16, math.log2(worst)


def test_the_tanh_forms_fit_is_16_times_inside_the_compiled_bound():
    """From |x| = 1/8 to -5 and 6 the tanh form comes from σ(2u)'s fit (phi_table.TANH,
    through phi_direct) within COMPILED_BOUND, though the form's bound is the exponential's
    wider one: against mpmath at 40 digits, 12 inputs inside each interval it serves and both
    its ends, both signs, and -5 itself, below which the exponential's loop takes over
    (2^-51.2 measured at 60 an interval)."""
    _kernels()
    f = get_function("gelu_tanh")
    rng = np.random.default_rng(9)
    worst = 0.0
    for k in range(phi_table.TANH.intervals):
        lo, hi = max(k * phi_table.INTERVAL, 0.125), (k + 1) * phi_table.INTERVAL
        magnitudes = np.concatenate([rng.uniform(lo, hi, 12), [lo]]).astype(np.float32)
        magnitudes = np.append(magnitudes, np.nextafter(np.float32(hi), np.float32(0)))
        for sign in (-1, 1):
            if hi <= (phi_table.TANH_DIRECT_LEFT if sign < 0 else fastref.TANH_LIMITED_FROM):
                worst = max(worst, _worst_relative(f, (sign * magnitudes).astype(np.float32)))
    at_edge = np.array([-phi_table.TANH_DIRECT_LEFT], dtype=np.float32)  # the fit's last
    worst = max(worst, _worst_relative(f, at_edge))
    assert worst < fastref.COMPILED_BOUND / 16, math.log2(worst)


@pytest.mark.parametrize("table", phi_table.TABLES, ids=lambda t: t.path.stem)
def test_the_table_is_mpmaths_fit(table):
    """Three rows fitted afresh equal the stored ones, bit for bit."""
    for k in (0, table.intervals // 2 + 1, table.intervals - 1):
        assert table.fit_row(k) == table.rows()[k].tolist(), k


@pytest.mark.parametrize("table", phi_table.TABLES, ids=lambda t: t.path.stem)
@pytest.mark.parametrize("damage", ["coefficient", "truncated", "shape"])
def test_a_damaged_table_is_refused_with_its_name(tmp_path, damage, table):
    text = table.path.read_text()
    data = json.loads(text)
    if damage == "coefficient":
        data["rows"][3][5] = (float.fromhex(data["rows"][3][5]) * (1 + 2.0**-40)).hex()
        text = json.dumps(data)
    elif damage == "truncated":
        text = text[: len(text) // 2]
    else:
        data["rows"] = data["rows"][:-1]
        text = json.dumps(data)
    path = tmp_path / table.path.name
    path.write_text(text)
    with pytest.raises(ReferenceDataError, match=str(path)):
        table.rows(path)


@pytest.mark.parametrize("function, start", [("gelu", 0x3F900000), ("gelu", 0xC0900000),
                                             ("phi", 0xBF400000), ("phi", 0x3E800000),
                                             ("gelu_grad", 0x3F000000),
                                             ("gelu_grad", 0xBF000000),
                                             ("phi_grad", 0x40800000),
                                             ("gelu_tanh", 0x3F900000),
                                             ("gelu_tanh", 0xC0900000),
                                             ("gelu_tanh_grad", 0x3F000000),
                                             ("gelu_tanh_grad", 0xBF000000)])
def test_the_close_calls_it_leaves_are_resolved_to_mpmaths_rounding(function, start):
    """The inputs the compiled value leaves in doubt (near a float32 or a midpoint: about
    2^51 times the bound in 2^24 encodings, 32 for 2^-46, 2048 for the tanh form's 2^-40) are
    found in 2^24 encodings and resolved: the reference then rounds to mpmath's correctly
    rounded float32 and lies on its side of it."""
    x = np.arange(start, start + (1 << 24), dtype=np.uint32).view(np.float32)
    x = x if x[0] > 0 else x[::-1]  # ascending
    doubt = np.flatnonzero(_phi_block(function, x)[2])
    assert 0 < len(doubt) < 4 * reference.relative_bound(function) * 2.0**51
    for i in doubt[:8]:
        block = x[i - 5:i + 5]
        v, _unit, slow = reference.values(function, block, monotone=True)
        assert slow >= 1
        exact = correctly_rounded(function, float(x[i]), FLOAT32)
        assert np.float32(v[5]).view(np.uint32) == exact.bits
        assert np.sign(v[5] - float(np.float32(v[5]))) == np.sign(exact.residual)


# blocks where the paths differ most: both signs of the middle, subnormal GELU results (x < -13),
# Φ's right (known unit), saturation at 9, the far left at -20, the edge of the closed form
BLOCKS = [0x3F800000, 0xBF800000, 0xC1500000, 0xC1700000 - 40000, 0x41100000 - 30000,
          0xC1A00000 - 30000, 0x33000000 - 30000, 0xB3000000 - 30000, 0x00400000]


# for the derivatives: about x* and the window's edges (-1, -0.5), where GELU′ crosses 1
# (x = -x*) and its side of 1 becomes known (1.5), subnormal values (x < -13), GELU′'s flat
# right (9) and φ's zero (20), the far left, the edge of the closed form near zero (2^-26)
DERIVATIVE_BLOCKS = [0xBF407569 - 30000, 0xBF800000 - 30000, 0xBF000000 - 30000,
                     0x3F407569 - 30000, 0x3FC00000 - 30000, 0xC1580000, 0x41100000 - 30000,
                     0x41A00000 - 30000, 0xC1A00000 - 30000, 0x32800000 - 30000,
                     0xB2800000 - 30000]
# for the tanh form: both signs of the middle, either side of its edges at -9.5 (values may
# be subnormal below) and 6 (kept below x from there), the far left (-12), saturation
TANH_BLOCKS = [0x3F800000, 0xBF800000, 0xC1180000 - 30000, 0xC1180000, 0x40C00000 - 30000,
               0x40C00000, 0xC1400000 - 30000, 0x41100000 - 30000, 0xC1300000]
# for the tanh form's derivative: about its x* (-0.75246) and its window's edges, 1.5, -9.5,
# subnormal values (-10.5), its flat right (9) and far left (-12), near 0
TANH_GRAD_BLOCKS = [0xBF40A000 - 30000, 0xBF80A000 - 30000, 0xBF00A000 - 30000,
                    0x3FC00000 - 30000, 0xC1180000 - 30000, 0xC1280000, 0x41100000 - 30000,
                    0xC1400000 - 30000, 0x3F800000]
SAME_FIGURES = ([(f, start) for f in ("phi", "gelu") for start in BLOCKS]
                + [(f, start) for f in ("phi_grad", "gelu_grad") for start in DERIVATIVE_BLOCKS]
                + [("gelu_tanh", start) for start in TANH_BLOCKS]
                + [("gelu_tanh_grad", start) for start in TANH_GRAD_BLOCKS])


@pytest.mark.parametrize("function, start", SAME_FIGURES)
def test_compiled_and_numpy_paths_give_the_same_figures(function, start, monkeypatch):
    """Three implementations - correctly rounded (near-ties aside), one planted ulp, NaN and
    zeros - per block, with and without numba: counts, histograms and worst inputs alike,
    errors to 2^-20 (the two references differ by under 2^-40 relative)."""
    from gelucheck.backends import load_user

    _kernels()
    impls = [load_user(f"sweep_impls:{name}_{function}", function)
             for name in ("rounded", "off", "broken")]
    compiled = chunk.evaluate(impls, function, start, start + 60000)
    monkeypatch.setattr(loops, "kernels", lambda: None)
    numpy = chunk.evaluate(impls, function, start, start + 60000)
    for key, a in plain(compiled)["implementations"].items():
        b = plain(numpy)["implementations"][key]
        for figures_a, figures_b in [(a, b), *zip(a["regions"].values(), b["regions"].values())]:
            for name in ("n", "n_finite", "not_correctly_rounded", "worst_bits"):
                assert figures_a[name] == figures_b[name], (key, name)
            for name in ("max_ulp", "sum_ulp"):
                assert figures_a[name] == pytest.approx(figures_b[name], rel=2.0**-20,
                                                        abs=2.0**-20), (key, name)
        assert a["histogram"] == b["histogram"] and a["max_abs_bits"] == b["max_abs_bits"], key
        assert a["max_abs"] == pytest.approx(b["max_abs"], rel=2.0**-20, nan_ok=True), key


@pytest.mark.parametrize("length", ["1", "1000", "sub-1", "sub", "sub+1", "4sub+1"])
@pytest.mark.parametrize("outputs", ["plain", "rare", "ties", "nan", "inf", "nan first",
                                     "inf first"])
def test_the_compiled_score_is_the_numpy_passes(length, outputs, monkeypatch):
    """kernels.score (one pass, maxima per sub-block of SCORE_SUB, the tail padded) against
    NumPy's passes over the errors: the same counts, maxima and first indices - errors of 2
    and 4 ulps and more everywhere or in one sub-block only (counted in a pass of their own
    where there are any), ties of the largest error and |y - v| in different sub-blocks, NaN
    outputs (the first NaN is the largest |y - v|), infinite outputs, either from the first
    output on - for lengths around the sub-block and the tail."""
    sub = _kernels().SCORE_SUB
    n = {"1": 1, "1000": 1000, "sub-1": sub - 1, "sub": sub, "sub+1": sub + 1,
         "4sub+1": 4 * sub + 1}[length]
    rng = np.random.default_rng(n)
    v = rng.normal(size=n)
    unit = 2.0 ** rng.integers(-30, 0, n).astype(np.float64)
    y = (v + rng.normal(size=n) * 3 * unit).astype(np.float32)
    if outputs == "rare":  # below 2 ulps but in the last sub-block: exactly 2, 4 and just below
        y = rng.normal(size=n).astype(np.float32)
        errors = rng.uniform(-1.9, 1.9, n)
        errors[-3:] = [3.75, -4.0, 2.0][-min(n, 3):]  # the last alone in 4sub+1's tail
        v = y.astype(np.float64) + errors * unit
    if outputs == "ties" and n > 2:  # the same largest error and |y - v| twice, far apart
        y[:], v[:], unit[:] = 1.0, 1.0, 2.0**-23
        v[[n // 3, 2 * n // 3, n - 1]] = 1.0 + 2.0**-23 * 7
    if outputs == "nan":
        y[[n // 2, n - 1]] = np.nan
    if outputs == "inf":
        y[n // 3] = np.inf
    if outputs == "nan first":  # (the pass that tests each output at once)
        y[[0, n // 2]] = np.nan
    if outputs == "inf first":
        y[[0, n - 1]] = -np.inf, np.inf
    compiled = scoring.score(y, v, unit)
    monkeypatch.setattr(loops, "kernels", lambda: None)
    numpy = scoring.score(y, v, unit)
    for name in ("infinite", "above_half", "at_least_one", "at_least_two", "at_least_four",
                 "max_ulp", "worst", "largest"):
        assert getattr(compiled, name) == getattr(numpy, name), name
    assert compiled.sum_ulp == pytest.approx(numpy.sum_ulp, rel=2.0**-40)
    assert compiled.max_abs == pytest.approx(numpy.max_abs, rel=0, nan_ok=True)


@pytest.mark.parametrize("n", [1, 63, 64, 65, 1000, 4097])
@pytest.mark.parametrize("outputs", ["sparse", "dense", "one-bin", "nan", "inf"])
def test_the_compiled_histogram_above_four_is_numpys(n, outputs):
    """kernels.histogram_above_four (bins computed per sub-block of 64, counted only where
    one is 4 ulps or more, at once where all share a bin) against stats.histogram of
    NumPy's errors: a few large errors among small ones, most large (up to 2^40, the capped
    bin), all in one bin but a few, NaN and inf outputs (the last bin) - for lengths around
    the sub-block and the tail; added to the counts given."""
    from gelucheck.sweep.stats import BINS, histogram

    compiled = _kernels()
    rng = np.random.default_rng(n)
    v = rng.normal(size=n)
    unit = 2.0 ** rng.integers(-30, -10, n).astype(np.float64)
    ulps = rng.uniform(0, 3.9, n)
    large = rng.random(n) < (0.9 if outputs == "dense" else 0.01)
    large[n // 2] = outputs == "sparse"
    ulps[large] = 2.0 ** rng.uniform(2, 41, np.count_nonzero(large))
    if outputs == "one-bin":  # [2^10, 2^11), but in every 100th
        ulps[:] = 2.0 ** rng.uniform(10.01, 10.99, n)
        ulps[::100] = 2.0**20.5
    y = (v + rng.choice([-1, 1], n) * ulps * unit).astype(np.float32)
    if outputs in ("nan", "inf"):
        y[[0, n - 1]] = np.nan if outputs == "nan" else np.inf
    err = np.abs(y.astype(np.float64) - v) / unit
    err[np.isnan(err)] = np.inf
    expected = histogram(err[err >= 4.0])
    expected[0] = 0
    counts = np.arange(BINS, dtype=np.int64)  # added to
    compiled.histogram_above_four(y, v, unit, counts)
    assert (counts - np.arange(BINS)).tolist() == expected.tolist()
    assert expected.sum() == np.count_nonzero(err >= 4.0)


@pytest.mark.parametrize("function, start", [("gelu", 0xC2000000), ("gelu", 0x20000000),
                                             ("gelu", 0xA0000000), ("gelu", 0x42000000),
                                             ("phi", 0x42000000), ("phi", 0x20000000),
                                             ("phi_grad", 0x20000000)])
def test_a_known_run_matches_only_its_results(function, start, sweep_path):
    """The closed-form results match themselves, a zero of the other sign where they are
    zeros, and nothing that differs in one bit or is a NaN."""
    x = np.arange(start, start + 4096, dtype=np.uint32).view(np.float32)
    known = known_part(function, x)
    expected = known.expected(x)
    assert known.matches(expected.copy(), x)
    flipped = expected.copy()
    flipped.view(np.uint32)[100] ^= 1
    assert not known.matches(flipped, x)
    nan = expected.copy()
    nan[4000] = np.nan
    assert not known.matches(nan, x)
    other_zero = -expected
    assert known.matches(other_zero, x) == (not expected.any())


def test_a_known_run_of_every_other_encoding_is_checked_in_full(sweep_path):
    """The compiled check reads the expected encodings off the first input's; a run that is
    not consecutive (every other encoding) is checked element by element instead."""
    x = np.arange(0x20000000, 0x20002000, 2, dtype=np.uint32).view(np.float32)
    known = known_part("gelu", x)
    expected = known.expected(x)
    assert known.matches(expected.copy(), x)
    expected.view(np.uint32)[-1] ^= 1
    assert not known.matches(expected, x)


def test_the_dense_figures_are_the_errors_binned_and_summed_by_hand(sweep_path):
    """dense_figures reads bins 0 to 3 and the sums off one pass's counts: they must be what binning
    each error against the histogram's edges and summing the finite ones give, in both paths -
    errors at the bins' edges (1/2, 1, 2, 4), far above, inf (a result of inf) and NaN."""
    from gelucheck.sweep.stats import histogram_edges

    rng = np.random.default_rng(11)
    n = 5000
    bits = np.arange(0x3F800000, 0x3F800000 + n, dtype=np.uint32)
    v = bits.view(np.float32).astype(np.float64) + 2.0**-30
    unit = np.full(n, 2.0**-23)
    ulps = np.concatenate([[0.5, 1.0, 2.0, 4.0, 2.0**40], rng.uniform(0, 9, n - 5)])
    y = (v + rng.choice([-1, 1], n) * ulps * unit).astype(np.float32)
    y[[7, 4000]] = np.inf
    y[[9, 4001]] = np.nan
    err = np.abs(y.astype(np.float64) - v) / unit
    err[np.isnan(err)] = np.inf
    regions = [("a", slice(0, 3000)), ("b", slice(3000, n))]
    stats = plain(scoring.dense_figures(y, v, unit, int(bits[0]), regions))
    edges = histogram_edges()
    expected = [int(np.count_nonzero(err <= 0.5))]
    expected += [int(np.count_nonzero((err > 0.5) & (err < edges[2])))]
    expected += [int(np.count_nonzero((err >= lo) & (err < hi)))
                 for lo, hi in itertools.pairwise(edges[2:-1])]
    expected += [int(np.count_nonzero(err >= edges[-2]) - np.count_nonzero(np.isinf(err))),
                 int(np.count_nonzero(np.isinf(err)))]
    assert stats["histogram"] == expected and sum(expected) == n
    for name, s in regions:
        figures, e = stats["regions"][name], err[s]
        assert figures["not_correctly_rounded"] == np.count_nonzero(e > 0.5)
        assert figures["n_finite"] == np.count_nonzero(np.isfinite(e))
        assert figures["sum_ulp"] == pytest.approx(e[np.isfinite(e)].sum(), rel=2.0**-40)
        assert figures["worst_bits"] == bits[s][np.argmax(e)]
    assert stats["max_abs_bits"] == bits[9] and math.isnan(stats["max_abs"])  # the first NaN


def _modulo(first, n):
    """first, first + 1, ... (n of them) modulo 2^32: the definition, in NumPy's uint64."""
    return ((np.arange(n, dtype=np.uint64) + int(first)) % 2**32).astype(np.uint32)


def _placed(values, offset):
    """values in an array that starts ``offset`` encodings past an aligned 64-bit word (the
    tests read whole words, and the encodings at either end apart), or -1: every other
    encoding of a wider one (strided: each apart)."""
    stride, offset = (2, 1) if offset < 0 else (1, offset)
    room = np.zeros(stride * len(values) + 2, dtype=np.uint32)
    assert room.ctypes.data % 8 == 0
    out = room[offset:offset + stride * len(values):stride]
    out[:] = values
    return out


# (first, following): within 2^32, and wrapping past it at an even or odd count, the first
# run or the one written, inside the words or at an end
_RUNS = [(0x3F800000, 0x3F800400), (0xFFFFFF00, 0xFFFFFFF0), (0xFFFFFF01, 0x10),
         (0x10, 0xFFFFFFF1), (0xFFFFFC18, 7), (0xFFFFFFFF, 0xFFFFFFFF)]


@pytest.mark.parametrize("offset", [0, 1, -1])
@pytest.mark.parametrize("n", [1000, 999, 3, 2, 1, 0])
@pytest.mark.parametrize(("first", "following"), _RUNS)
def test_the_inputs_tests_find_any_changed_encoding(first, following, n, offset):
    """kernels.consecutive and consecutive_then (the input guard, and the test of a known run's
    results) against NumPy's arithmetic modulo 2^32, on runs that start on a 64-bit word or
    inside one, or strided, of even and odd length: the intact encodings pass, one bit
    changed anywhere fails, and consecutive_then writes the following encodings either way."""
    k = _kernels()
    intact, written = _modulo(first, n), _modulo(following, n)
    for changed in sorted({None, *(i for i in (0, 1, 17, 255, 256, n - 2, n - 1) if 0 <= i < n)},
                          key=lambda i: -1 if i is None else i):
        bits = _placed(intact, offset)
        if changed is not None:
            bits[changed] ^= np.uint32(1 << (changed % 32))
        assert k.consecutive(bits, np.uint32(first)) == (changed is None)
        assert k.consecutive_then(bits, np.uint32(first), np.uint32(following)) == (
            changed is None)
        assert np.array_equal(bits, written)


@pytest.mark.parametrize("offset", [0, 1, -1])
@pytest.mark.parametrize("n", [1000, 999, 2, 1])
def test_the_non_finite_test_finds_any_number(n, offset):
    """kernels.all_non_finite: NaNs and infinities of either sign, NaNs of any payload, pass;
    a zero, the largest float32 or the smallest subnormal anywhere fails."""
    k = _kernels()
    rng = np.random.default_rng(n)
    nans = rng.integers(0x7F800001, 0x80000000, n, dtype=np.uint64).astype(np.uint32)
    nans[::2] |= np.uint32(0x80000000)
    for infinity in (None, 0x7F800000, 0xFF800000):
        bits = _placed(nans.copy(), offset)
        if infinity is not None:
            bits[n // 3::3] = infinity
        assert k.all_non_finite(bits)
    for number in (0x00000000, 0x80000000, 0x7F7FFFFF, 0xFF7FFFFF, 0x00000001):
        for changed in {0, n // 2, n - 1}:
            bits = _placed(nans.copy(), offset)
            bits[changed] = number
            assert not k.all_non_finite(bits)
            assert np.isfinite(bits.view(np.float32)).any()


@pytest.mark.parametrize("offset", [0, 1, -1])
@pytest.mark.parametrize("n", [1000, 999, 2, 1, 0])
@pytest.mark.parametrize(("value", "mask"), [(0x80000000, 0x7FFFFFFF), (0x3F800000, 0xFFFFFFFF)])
def test_the_constant_test_finds_any_other_encoding(value, mask, n, offset):
    """kernels.constant (a known run's results when they are one constant): every encoding
    equal in the mask's bits passes - a zero of either sign, where the mask leaves the sign
    out - and one bit changed in the mask anywhere fails."""
    k = _kernels()
    for changed in (None, 0, 1, 500, n - 2, n - 1):
        if changed is not None and not 0 <= changed < n:
            continue
        bits = _placed(np.full(n, value, dtype=np.uint32), offset)
        bits[::3] ^= np.uint32(~mask & 0xFFFFFFFF)  # outside the mask: no matter
        if changed is not None:
            bits[changed] ^= np.uint32(1 << (changed % 31))
        assert k.constant(bits, np.uint32(value), np.uint32(mask)) == (changed is None)


def test_an_implementation_that_writes_to_its_inputs_is_its_error_alone(sweep_path):
    """A block's inputs go to each implementation without a copy (tested intact afterwards):
    one that overwrites them is an error, and the implementation after it is measured on the
    block's own inputs - the figures it has when measured alone."""
    from gelucheck.backends import load_user

    mutating, rounded = (load_user(f"sweep_impls:{name}", "gelu")
                         for name in ("in_place_gelu", "rounded_gelu"))
    start = 0x3F800000
    both = plain(chunk.evaluate([mutating, rounded], "gelu", start, start + 5000))[
        "implementations"]
    alone = plain(chunk.evaluate([rounded], "gelu", start, start + 5000))["implementations"]
    assert "modified its input in place" in both[f"{mutating.id}/gelu"]["error"]
    key = f"{rounded.id}/gelu"
    for name in ("n", "max_ulp", "worst_bits", "sum_ulp", "histogram", "max_abs_bits"):
        assert both[key][name] == alone[key][name], name


def test_subnormal_values_are_judged_against_the_fixed_quantum():
    """kernels._judge with ``subnormal``: a value on (or within the bound of) a float32
    subnormal rounding midpoint or a subnormal float32 is in doubt, one between them is not -
    the test that the loops skip only where no value can be subnormal; one nearer 0 than any
    other float32 is not (its side of 0 is its sign) and is kept TAIL_FLOOR from 0."""
    k = _kernels()  # skips without numba, before importing it
    from numba import njit

    judge = k._judge

    @njit
    def judged(values, bound):
        slack = np.int64(bound * 2.0**53)
        subnormal_slack = 0.5 * k.QUANTUM - bound * k.SMALLEST_NORMAL
        out = np.empty((len(values), 2))
        for i, value in enumerate(values):
            v, _, doubt = judge(value, False, slack, subnormal_slack, True)
            out[i, 0], out[i, 1] = v, doubt
        return out

    q = 2.0**-149
    n = np.array([1.0, 3.0, 1000.0, 2.0**22 + 7])
    for values, in_doubt in (((n + 0.5) * q, True), ((n + 0.5) * q * (1 + 2.0**-50), True),
                             (n * q, True), (n * q * (1 - 2.0**-50), True),
                             ((n + 0.25) * q, False), (-(n + 0.75) * q, False),
                             (np.array([2.0**-160, -2.0**-300, 0.3 * q]), False)):
        v, doubt = judged(values, 2.0**-46).T
        assert (doubt == in_doubt).all(), values
        assert np.array_equal(v, np.where(np.abs(values) < fastref.TAIL_FLOOR,
                                          np.copysign(fastref.TAIL_FLOOR, values), values))


@pytest.mark.parametrize("bound", [fastref.RELATIVE_BOUND, fastref.COMPILED_BOUND,
                                   fastref.DERIVATIVE_BOUND])
def test_a_value_that_may_lie_across_a_power_of_two_is_in_doubt(bound):
    """Below a power of two 2^k float32's ulp is half what it is above, so a float64 value
    whose exact value may lie across 2^k must be in doubt: the test of the float32s'
    window finds it (2^k is a float32). At every float64 within SLACK + 40 places of every
    7th power of two in float32's normal range, both signs, the compiled test (kernels._judge)
    and the NumPy one (fastref._uncertain, for RELATIVE_BOUND) leave no value out of doubt
    whose distance from 2^k the bound could cover: |v - 2^k| <= bound·|v| (exact in
    float64: v and 2^k lie within a factor 2, and bound is a power of two)."""
    k = _kernels()
    from numba import njit

    judge = k._judge

    @njit
    def doubts(values, bound):
        slack = np.int64(bound * 2.0**53)
        out = np.empty(len(values), dtype=np.bool_)
        for i, value in enumerate(values):
            out[i] = judge(value, False, slack, 0.0, False)[2]
        return out

    slack = int(bound * 2.0**53)
    powers = np.ldexp(1.0, np.arange(-125, 128, 7)).view(np.int64)
    steps = np.arange(-slack - 40, slack + 41, dtype=np.int64)
    v = (powers[:, None] + steps[None, :]).reshape(-1).view(np.float64)
    v = np.concatenate([v, -v])
    mantissa, exponent = np.frexp(v)  # the power of two nearest v: 2^exponent or half it
    power = np.copysign(np.ldexp(1.0, exponent - (np.abs(mantissa) < 0.75)), v)
    reachable = np.abs(v - power) <= bound * np.abs(v)
    assert reachable.sum() > len(powers) and not reachable.all()
    flagged = doubts(v, bound)
    assert flagged[reachable].all()
    if bound == fastref.RELATIVE_BOUND:
        assert fastref._uncertain(v)[reachable].all()


def test_the_loops_skip_the_subnormal_test_only_above_minus_12(monkeypatch):
    """Φ(-12) and GELU(-12) are float32 normal numbers (mpmath), so x >= -12 needs no
    subnormal test; below, where Φ(-13.5) is subnormal, phi_block is told to make it."""
    k = _kernels()
    with mpmath.workdps(30):
        assert mpmath.ncdf(-12) > 2.0**-126 and mpmath.ncdf(-13.5) < 2.0**-126
    assert fastref.NORMAL_ABOVE <= -12
    told = []
    real = k.phi_block
    monkeypatch.setattr(k, "phi_block", lambda *a: told.append(a[5]) or real(*a))
    for lo, hi in ((-13.45, -13.3), (-11.95, -11.8)):  # one interval each
        x = np.linspace(lo, hi, 50, dtype=np.float32)
        fastref._compiled_middle(get_function("gelu"), x, np.empty(50), np.empty(50))
    assert told == [True, False]


def test_phis_own_fit_serves_right_of_zero_and_down_to_minus_5(monkeypatch):
    """phi_direct (Φ's fit, no exponential) computes 1/8 <= x <= 9 and -5 <= x <= -1/8 -
    ``limited`` from 7.5 on, where Φ and GELU come within the bound of 1 and x - phi_block
    (R·φ) the rest of the middle: Φ's fit holds 2^-62 of Φ only down to -5."""
    k = _kernels()
    told = []
    for name in ("phi_block", "phi_direct"):
        real = getattr(k, name)
        monkeypatch.setattr(k, name, lambda *a, name=name, real=real: told.append(
            "phi_direct_limited" if name == "phi_direct" and a[5] else name) or real(*a))
    pieces = [(0.13, 0.2), (7.26, 7.49), (7.5, 7.7), (8.8, 8.95), (-0.2, -0.13),
              (-4.99, -4.76), (-5.2, -5.01), (-19.9, -19.8)]
    for lo, hi in pieces:  # one interval each
        x = np.linspace(lo, hi, 50, dtype=np.float32)
        fastref._compiled_middle(get_function("phi"), x, np.empty(50), np.empty(50))
    assert told == (["phi_direct"] * 2 + ["phi_direct_limited"] * 2 + ["phi_direct"] * 2
                    + ["phi_block"] * 2)
    with mpmath.workdps(30):  # below 7.5, farther from 1 than the bound: no limit needed
        assert 1 - mpmath.ncdf(fastref.LIMITED_FROM) > 2 * fastref.COMPILED_BOUND
    assert phi_table.DIRECT_LEFT == 5.0 and phi_table.PHI.intervals * phi_table.INTERVAL >= 9


def _closed_form_starts():
    """Blocks of 3000 encodings in each closed form: for Φ and the GELU forms |x| <= 2^-30
    (zeros, odd subnormals whose GELU is a float32 tie, the edge at 2^-30, both signs), the
    right of saturation (9 = 0x41100000, powers of two in it, up to the largest float32) and
    the far left (-20 = 0xc1a00000; the tanh form's begins at -12: -20 on is in it too); for
    the derivatives (GELU′ of both forms, φ) |x| <= 2^-30, the far left from its edge on and
    down to the lowest float32, the flat right from its edge on and up to the largest."""
    from gelucheck.sweep.edges import far_left, right_edge

    for function in ("phi", "gelu", "gelu_tanh"):
        for start in (0x00000000, 0x80000000, 0x00400001, 0x807FF000, 0x00FFF000, 0x0C000000,
                      0x30800000 - 3000, 0xB0800000 - 3000, 0x41100001, 0x41800000 - 1500,
                      0x7F7FFFFF - 2999, 0xC1A00000, 0xC2000000 - 1500, 0xFF7FFFFF - 2999):
            yield function, start
    for function in ("phi_grad", "gelu_grad", "gelu_tanh_grad"):
        f = get_function(function)
        far = int(np.float32(far_left(f)).view(np.uint32))  # x <= far_left: far
        right = int(np.float32(right_edge(f)).view(np.uint32)) + 1  # x > right_edge
        for start in (0x00000000, 0x80000000, 0x30800000 - 3000, 0xB0800000 - 3000, far,
                      0xFF7FFFFF - 2999, right, 0x7F7FFFFF - 2999):
            yield function, start


@pytest.mark.parametrize(("function", "start"), list(_closed_form_starts()))
def test_the_closed_forms_parts_are_numpys_bit_for_bit(function, start, monkeypatch):
    """Where the values are closed forms, for an implementation that misses them (torch's
    GELU overflows near the largest float32, the tanh form's derivative is NaN beyond
    |x| = 2^42 in torch and JAX): the compiled loop gives the NumPy path's values and units,
    bit for bit, and no close call."""
    _kernels()
    x = np.arange(start, start + 3000, dtype=np.uint32).view(np.float32)
    f = get_function(function)
    assert reference.one_compiled_run(f, float(x[0]), float(x[-1]))
    assert reference.module_of(f).compiled_run(f, x) is not None
    compiled = reference.values(function, x, monotone=True)
    monkeypatch.setattr(loops, "kernels", lambda: None)
    numpy = reference.values(function, x, monotone=True)
    for a, b in zip(compiled[:2], numpy[:2]):
        assert np.array_equal(a.view(np.int64), b.view(np.int64))
    assert compiled[2] == numpy[2] == 0


# score's sum on errors of every size (their order shows in the last bits), in a process of
# its own with numba's disk cache where the test puts it
_SUM_IN_A_PROCESS = """
import numpy as np
from gelucheck.sweep import kernels
rng = np.random.default_rng(11)
v = rng.standard_normal(1 << 16) * 2.0 ** rng.integers(-20, 20, 1 << 16)
y = (v * (1 + rng.standard_normal(1 << 16) * 2.0 ** rng.integers(-30, -2, 1 << 16))
     ).astype(np.float32)
unit = 2.0 ** (np.floor(np.log2(np.abs(v))) - 23)
print(repr(kernels.score(y, v, unit)[0]))
"""


@pytest.mark.slow
def test_score_sums_alike_compiled_or_loaded_from_the_cache(tmp_path):
    """The sum of the errors is taken in SIMD lanes, in the compiled loop's order: one code,
    whether this process compiled it or numba loaded it from its disk cache. (A cached loop
    that another called ran as its own compile in the process that compiled both, and as the
    caller's linked copy, optimized apart, where loaded: the same sweep's means differed in
    the last bit after an install and after.)"""
    _kernels()
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}

    def total() -> str:
        done = subprocess.run([sys.executable, "-c", _SUM_IN_A_PROCESS], capture_output=True,
                              text=True, env=env, check=True)
        return done.stdout.strip()

    compiled = total()
    assert any(tmp_path.rglob("*.nbc")), "the loop was not cached: nothing loaded next"
    assert total() == compiled


def test_no_cached_loop_is_called_from_another():
    """What the test above holds for score, for every loop: a loop that another compiled loop
    calls is inlined into it (inline="always"), never cached on its own - else which copy
    runs depends on the process that compiled it. Read off kernels.py's source."""
    tree = ast.parse(inspect.getsource(_kernels()))
    jitted = {}  # name: whether cached
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            for deco in node.decorator_list:
                if isinstance(deco, ast.Call) and getattr(deco.func, "id", "") == "njit":
                    jitted[node.name] = any(k.arg == "cache" for k in deco.keywords)
    cached = {name for name, is_cached in jitted.items() if is_cached}
    assert {"score", "_consecutive_words_then"} <= cached  # the parse found the loops
    calls = [(caller.name, call.func.id) for caller in ast.walk(tree)
             if isinstance(caller, ast.FunctionDef) and caller.name in jitted
             for call in ast.walk(caller)
             if isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
             and call.func.id in cached and call.func.id != caller.name]
    assert calls == []


def test_the_loops_are_handed_contiguous_float32_whatever_the_caller_holds(monkeypatch):
    """Each loop is compiled for one type, a contiguous float32 x, as a block passes it: the
    generic path (a float64 copy, reversed where x descends, or sorted) hands the loops a
    float32 copy of each part. Another type would compile every loop once more - inside a
    sweep's timed run the first time."""
    k, erf = _kernels(), loops.erf_kernels()
    handed = []

    def spy(real):
        return lambda x, *rest: handed.append((x.dtype, x.flags.c_contiguous)) or real(x, *rest)

    for module, names in ((k, ("phi_block", "phi_direct", "grad_block", "tanh_block",
                                "tanh_grad_block", "star_block")),
                          (erf, ("erf_fit_block", "erf_far_block", "erfc_block", "tiny_block"))):
        for name in names:
            monkeypatch.setattr(module, name, spy(getattr(module, name)))
    for module, table in ((k, "PHI_SERIES"), (k, "GELU_GRAD_SERIES"), (erf, "SERIES_LOOPS")):
        monkeypatch.setattr(module, table, {t: spy(f) for t, f in getattr(module, table).items()})
    x = np.concatenate([np.linspace(-7, 7, 301), [-0.01, 0.003, 2.0**-20]]).astype(np.float32)
    x = np.sort(x)
    shuffled = np.random.default_rng(3).permutation(x)
    for function in (*fastref.COMPILED, *erf_reference.FUNCTIONS):
        for given in (x[::-1], shuffled, x.astype(np.float64)[::-1]):
            reference.values(function, given)
    assert len(handed) > 50
    assert set(handed) == {(np.dtype(np.float32), True)}

"""Scoring a block (sweep/scoring.py and the histogram of sweep/stats.py): bit space against
measuring every input, the closed form's figures, aliases, outputs all NaN, and the bins of
errors a little above or below a whole or half ulp."""
import json
import math
from pathlib import Path

import mpmath
import numpy as np
import pytest

from gelucheck.backends import find
from gelucheck.sweep import chunk, fastref, loops, reference, scoring
from gelucheck.sweep import stats as sweep_stats
from sweep_support import (
    EXACT_PART_BLOCKS,
    FUNCTIONS,
    TINY_BLOCKS,
    Returns,
    mp_errors,
    mp_exact_errors,
    plain,
)


def test_histogram_bins_by_hand():
    err = np.array([0.6, 1.0, 1.5, 3.0, 2.0**40, np.inf])
    counts = sweep_stats.histogram(err)
    edges = sweep_stats.histogram_edges()
    assert counts[1] == 1 and counts[2] == 2 and counts[3] == 1  # (1/2,1), [1,2), [2,4)
    assert counts[sweep_stats.BINS - 2] == 1 and counts[sweep_stats.BINS - 1] == 1  # >= 2^33, inf
    for k, e in enumerate(err[:4]):
        b = [1, 2, 2, 3][k]
        assert edges[b] <= e < edges[b + 1] or (b == 1 and 0.5 < e < 1)


def test_histogram_matches_the_edges_on_many_errors():
    """Errors over every bin, repeated (as a bad implementation makes them), counted against
    the edges one by one."""
    rng = np.random.default_rng(5)
    err = np.concatenate([0.5 + rng.random(3000) / 2, 2.0 ** rng.uniform(0, 40, 3000),
                          [1.0, 2.0**33, 2.0**34, np.inf, np.inf, 3.0, 3.0, 3.0]])
    edges = sweep_stats.histogram_edges()
    expected = [0] * sweep_stats.BINS
    last = sweep_stats.BINS - 1
    for e in err:  # bin 1 is (1/2, 1), bin k >= 2 [edge k, edge k+1), the second last open
        b = last if e == np.inf else next(k for k in range(1, last) if edges[k + 1] > e
                                          or k == last - 1)
        expected[b] += 1
    assert sweep_stats.histogram(err).tolist() == expected


@pytest.mark.parametrize("start", [0x3F800000, 0xC0A00000 - 0x8000, 0x00000000, 0x7F000000])
def test_bit_space_scoring_equals_measuring_every_input(start):
    """With several implementations the comparison starts in bit space (scoring.Rounded); it
    must give what measuring every input in float64 gives (scoring.dense_figures), for outputs that
    are correctly rounded, off by an ulp, NaN, of the other zero's sign, or wholly wrong."""
    bits = np.arange(start, start + chunk.BLOCK, dtype=np.uint32)
    x = bits.view(np.float32)
    v, unit, _ = reference.values("gelu", x, monotone=True)
    regions = chunk.region_slices(x)
    rounded = v.astype(np.float32)
    rng = np.random.default_rng(start)
    few = rounded.copy()
    at = rng.choice(len(x), 40, replace=False)
    few[at[:20]] = np.nextafter(few[at[:20]], np.float32(np.inf))
    few[at[20:25]] = np.nan
    few[at[25:30]] = -few[at[25:30]]
    many = np.where(rng.random(len(x)) < 0.3, np.float32(0), rounded)  # dense fallback
    # wrong in the first outputs alone, which decide the path before the whole block is
    # rounded (dense there, few over the block), or wrong only after them (many)
    first = rounded.copy()
    first[:scoring.SAMPLE // 4] = 0
    after = np.where(np.arange(len(x)) >= scoring.SAMPLE, np.float32(0), rounded)
    # in either order: the rounded results are scored only once an output needs them
    for order in ((rounded, few, many, first, after), (first, after, many, few, rounded)):
        shared = scoring.Rounded(v, unit, int(bits[0]), regions)
        for y in order:
            _assert_bit_space_scores_as_dense(shared, y, v, unit, bits, regions)


def _assert_bit_space_scores_as_dense(shared, y, v, unit, bits, regions):
    fast = plain(shared.score(y))
    slow = plain(scoring.dense_figures(y, v, unit, int(bits[0]), regions))
    assert fast["sum_ulp"] == pytest.approx(slow["sum_ulp"], rel=1e-12)
    for name in slow["regions"]:
        assert fast["regions"][name]["sum_ulp"] == pytest.approx(
            slow["regions"][name]["sum_ulp"], rel=1e-12)
        fast["regions"][name]["sum_ulp"] = slow["regions"][name]["sum_ulp"]
    fast["sum_ulp"] = slow["sum_ulp"]
    a, b = fast.pop("max_abs"), slow.pop("max_abs")  # NaN for a NaN output, in both
    assert a == b or (np.isnan(a) and np.isnan(b))
    assert fast == slow


@pytest.mark.parametrize("function", FUNCTIONS)
@pytest.mark.parametrize("where", sorted(EXACT_PART_BLOCKS) + sorted(TINY_BLOCKS))
@pytest.mark.parametrize("outputs", ["rounded", "one-off", "nan"])
def test_a_block_scored_without_the_reference_equals_one_measured(function, where, outputs,
                                                                  monkeypatch):
    """An implementation returning the correctly rounded results is scored in closed form
    without any float64 pass; whether or not the shortcut is taken, the block's figures are
    those of measuring every input (scoring.dense_figures) - exactly where the errors are
    zero, to the float64 reference's accuracy (2^-16 ulp an input) near zero."""
    start = {**EXACT_PART_BLOCKS, **TINY_BLOCKS}[where]
    bits = np.arange(start, start + chunk.BLOCK, dtype=np.uint32)
    x = bits.view(np.float32)
    v, unit, _ = reference.values(function, x, monotone=True)
    calls = []  # the block's reference, computed or not
    computed = reference.values_and_doubts
    monkeypatch.setattr(reference, "values_and_doubts", lambda *a, **k: calls.append(1) or
                        computed(*a, **k))
    y = v.astype(np.float32)
    if outputs == "one-off":
        y[123] = np.nextafter(y[123], np.float32(np.inf))
    elif outputs == "nan":
        y[7] = np.nan
    block = chunk.evaluate_block([Returns(function, y)], fastref.get_function(function),
                                  start, start + chunk.BLOCK)
    (got,) = plain(block)["implementations"].values()
    want = plain(scoring.dense_figures(y, v, unit, int(bits[0]), chunk.region_slices(x)))
    for k in ("computed", "exact"):
        got.pop(k, None)
    assert len(calls) == (0 if outputs == "rounded" else 1)
    if outputs == "rounded":  # the closed form against float64's (beside 1, x or 0 where
        # those are the results: 2^-29 ulp from them, 2^-51 from 0)
        (region,) = got["regions"]
        for closed, measured in ((got, want), (got["regions"][region], want["regions"][region])):
            for figures in (closed, measured):  # float64's errors are flat at 2^-29 below
                for k in ("worst_bits", "max_abs_bits", "max_abs"):  # 2^-53: not where
                    figures.pop(k, None)
            assert closed.pop("max_ulp") == pytest.approx(measured.pop("max_ulp"), abs=2.0**-16)
            assert closed.pop("sum_ulp") == pytest.approx(measured.pop("sum_ulp"),
                                                          abs=len(x) * 2.0**-16)
    else:
        a, b = got.pop("max_abs"), want.pop("max_abs")
        assert a == b or (np.isnan(a) and np.isnan(b))
    assert got == want


@pytest.mark.parametrize(("function", "start"), [
    ("gelu_tanh_grad", 0x3F800000 - 1000),  # across x = 1: two regions
    ("gelu_tanh_grad", 0xD5000000),  # the far left, where torch's and JAX's overflow
    ("gelu", 0x7F000000),  # the saturated right from 2^127, where torch's GELU overflows
    ("erf", 0x3E000000),  # erf's fit
    ("erf", 0x2A000000)])  # below 2^-30, where a block may be replayed
@pytest.mark.parametrize("names", [["all_nan"], ["all_nan", "nan_but_last"],
                                   ["nan_but_last", "all_nan"], ["all_inf"],
                                   ["inf_then_nan", "inf_but_last"], ["inf_but_last", "all_inf"]])
def test_outputs_all_nan_or_infinite_score_as_measured_without_the_reference(
        function, start, names, monkeypatch):
    """Where every output is NaN or infinite the block's figures are what measuring each
    output gives (every error infinite, the first NaN the largest |y - v|, else the first
    output, the exact value at the first input); a block such but for its last output is
    measured."""
    from gelucheck.backends import load_user

    if function == "erf":
        pytest.importorskip("numba", reason="the erf family's sweep reference is compiled")
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    impls = [load_user(f"sweep_impls:{name}", function) for name in names]
    fast = chunk.evaluate(impls, function, start, start + 2000)
    with monkeypatch.context() as m:
        m.setattr(chunk, "every_error_infinite", lambda y: False)
        measured = chunk.evaluate(impls, function, start, start + 2000)
    assert json.dumps(plain(fast), sort_keys=True) == json.dumps(plain(measured), sort_keys=True)
    name = names[0] if "but_last" not in names[0] else names[1]
    figures = fast.implementations[f"user:sweep_impls:{name}/{function}"]
    assert figures.whole.n_finite == 0 and figures.histogram[-1] == 2000
    assert figures.whole.max_ulp == math.inf and figures.whole.worst_bits == start
    if name == "all_inf":  # hand-derived: |inf - v| at the first input
        assert figures.max_abs == math.inf and figures.max_abs_bits == start
    else:  # the first NaN: the first input's, or inf_then_nan's 8th
        assert math.isnan(figures.max_abs)
        assert figures.max_abs_bits == start + (7 if name == "inf_then_nan" else 0)


def test_outputs_seen_before_in_a_block_are_scored_once(monkeypatch):
    """Two implementations returning the same floats (an alias) get the figures of the first,
    without a second comparison; each equals its outputs measured alone."""
    counted = []
    score = scoring.Rounded.score
    monkeypatch.setattr(scoring.Rounded, "score",
                        lambda self, y: counted.append(1) or score(self, y))
    start = 0xBF900000
    bits = np.arange(start, start + chunk.BLOCK, dtype=np.uint32)
    x = bits.view(np.float32)
    v, unit, _ = reference.values("gelu", x, monotone=True)
    y = v.astype(np.float32)
    y[::50] = np.nextafter(y[::50], np.float32(np.inf))
    other = y.copy()
    other[77] = np.nextafter(other[77], np.float32(-np.inf))
    impls = [Returns("gelu", y), Returns("gelu", y.copy()), Returns("gelu", other)]
    for i, impl in enumerate(impls):
        impl.id = f"test:{i}"
    block = chunk.evaluate_block(impls, fastref.get_function("gelu"), start, start + chunk.BLOCK)
    assert len(counted) == 2
    for impl, outputs in zip(impls, (y, y, other)):
        got = plain(block.implementations[f"{impl.id}/gelu"])
        want = plain(scoring.dense_figures(outputs, v, unit, int(bits[0]),
                                           chunk.region_slices(x)))
        for k in ("computed", "exact"):
            got.pop(k, None)
        for a, b in [(got, want)] + [(got["regions"][r], want["regions"][r])
                                     for r in want["regions"]]:
            assert a.pop("sum_ulp") == pytest.approx(b.pop("sum_ulp"), rel=1e-12)
        assert got == want


def test_outputs_are_aliases_only_when_equal_throughout():
    """The alias test decides on a prefix only when that differs: outputs equal for the first
    thousand and different at the last are not aliases; ±0 are alike, NaN never."""
    a = np.linspace(-3, 3, 5000, dtype=np.float32)
    b = a.copy()
    assert chunk._same(a, b)
    b[-1] = np.nextafter(b[-1], np.float32(0))
    assert not chunk._same(a, b)
    c, d = np.zeros(300, np.float32), -np.zeros(300, np.float32)
    assert chunk._same(c, d)
    c[299] = d[299] = np.nan
    assert not chunk._same(c, d)


Q = 2.0**-149  # float32's quantum


# (function, first input's encoding, outputs, what lies there): outputs one float32 step
# from a correctly rounded result that is a float32 the exact value approaches from one
# side - 1 (Φ from below, GELU′ from above), x (GELU and its tanh form, from below), 1/2
# (Φ and GELU′ near 0, on x's side), 0 (the tails, with the function's sign) - so that each
# error is a whole or half number of ulps and a little more or, as here, a little less:
# every output errs by more than 1/2 ulp (not correctly rounded) and less than 1.
ONE_STEP_TOWARDS = [
    ("gelu_grad", 0x41200000, lambda x: np.full_like(x, 1 - 2.0**-24), "flat right: 1/2+"),
    ("gelu_grad", 0x41200000, lambda x: np.full_like(x, 1 + 2.0**-23), "flat right: 1-"),
    ("gelu_grad", 0x41080000, lambda x: np.full_like(x, 1 - 2.0**-24), "middle, 8.5: 1/2+"),
    ("gelu_grad", 0x21800000, lambda x: np.full_like(x, 0.5 - 2.0**-25), "x = 2^-60: 1/2+"),
    ("phi", 0x21800000, lambda x: np.full_like(x, 0.5 - 2.0**-25), "x = 2^-60: 1/2+"),
    ("phi", 0x21800000, lambda x: np.full_like(x, 0.5 + 2.0**-24), "x = 2^-60: 1-"),
    ("phi", 0x41200000, lambda x: np.full_like(x, 1 - 2.0**-24), "right: 1-"),
    ("phi", 0x41080000, lambda x: np.full_like(x, 1 - 2.0**-24), "middle, 8.5: 1-"),
    ("gelu", 0x41200000, lambda x: np.nextafter(x, np.float32(0)), "right: 1-"),
    ("gelu", 0x41080000, lambda x: np.nextafter(x, np.float32(0)), "middle, 8.5: 1-"),
    ("gelu_tanh", 0x41200000, lambda x: np.nextafter(x, np.float32(0)), "right: 1-"),
    ("gelu_tanh", 0xC1500000, lambda x: np.full_like(x, -Q), "far left, -13: 1-"),
    ("gelu_tanh", 0xC1300000, lambda x: np.full_like(x, -Q), "middle, -11: 1-"),
    ("gelu_tanh_grad", 0x41200000, lambda x: np.full_like(x, 1 - 2.0**-24), "flat right: 1/2+"),
    ("gelu_tanh_grad", 0x41080000, lambda x: np.full_like(x, 1 + 2.0**-23), "middle, 8.5: 1-"),
    ("phi", 0xC1A80000, lambda x: np.full_like(x, Q), "far left, -21: 1-"),
    ("gelu", 0xC1A80000, lambda x: np.full_like(x, -Q), "far left, -21: 1-"),
    ("gelu", 0xC1980000, lambda x: np.full_like(x, -Q), "middle, -19: 1-"),
    ("gelu_grad", 0xC1980000, lambda x: np.full_like(x, -Q), "middle, -19: 1-"),
    ("phi_grad", 0x41A80000, lambda x: np.full_like(x, Q), "right, 21: 1-"),
]


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "numpy"])
@pytest.mark.parametrize("function, start, outputs, where", ONE_STEP_TOWARDS,
                         ids=[f"{c[0]}-{c[3]}" for c in ONE_STEP_TOWARDS])
def test_an_error_of_a_whole_or_half_ulp_and_a_little_is_binned_by_its_little(
        function, start, outputs, where, compiled, monkeypatch):
    """Where the reference's float64 value is, or rounds to, the float32 the exact value
    approaches, an output one step from it errs by 1/2 or 1 ulp in float64 - but by a little
    more or less in fact, and that decides whether it is correctly rounded (1/2) and its bin
    (1): all are outputs not correctly rounded in the bin (1/2, 1), as mpmath says of the
    first, middle and last."""
    if not compiled:
        monkeypatch.setattr(loops, "kernels", lambda: None)
    elif loops.kernels() is None:
        pytest.skip("numba is not installed: no compiled loops")
    n = 2000
    bits = np.arange(start, start + n, dtype=np.uint32)
    x = bits.view(np.float32)
    y = outputs(x).astype(np.float32)
    errors = mp_exact_errors(function, x[[0, n // 2, n - 1]], y[[0, n // 2, n - 1]], 120)
    assert all(0.5 < e < 1 for e in errors), errors  # what the figures must say
    block = chunk.evaluate_block([Returns(function, y)], fastref.get_function(function),
                                  start, start + n)
    (got,) = plain(block)["implementations"].values()
    assert got["not_correctly_rounded"] == n
    assert got["histogram"][1] == n, got["histogram"][:4]
    assert 0.5 < got["max_ulp"] <= 1


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "numpy"])
def test_an_error_a_billionth_below_one_ulp_is_binned_below_one(compiled, monkeypatch):
    """Found by the compiled GELU′: torch's GELU′ at x = 0.43656546 (0x3edf8582) is
    0.8271204233169556, 1 - 1.3e-9 ulp from the exact value (mpmath) - the float64 reference
    lies within its bound of a float32 there, and said 1 ulp."""
    if not compiled:
        monkeypatch.setattr(loops, "kernels", lambda: None)
    elif loops.kernels() is None:
        pytest.skip("numba is not installed: no compiled loops")
    import sweep_impls

    start, n, at = 0x3EDF8582 - 1000, 2000, 1000
    x = np.arange(start, start + n, dtype=np.uint32).view(np.float32)
    y = sweep_impls.rounded_gelu_grad(x)
    y[at] = np.float32(0.8271204233169556)
    error = mp_errors("gelu_grad", x[[at]], y[[at]])[0]
    assert 1 - 2e-9 < error < 1  # what the figures must say
    block = chunk.evaluate_block([Returns("gelu_grad", y)], fastref.get_function("gelu_grad"),
                                  start, start + n)
    (got,) = plain(block)["implementations"].values()
    assert got["histogram"][2:] == [0] * (len(got["histogram"]) - 2)
    assert got["max_ulp"] < 1 and got["worst_bits"] == start + at


@pytest.mark.parametrize("start", [0x41100001, 0x41080000, 0x40E00000], ids=["9+", "8.5", "7"])
def test_a_drift_variants_histogram_is_mpmaths_output_for_output(start):
    """quick_gelu, x·σ(1.702x), returns x less a few ulps where GELU has all but saturated:
    errors of k ulps less a little, for k = 1, 2, 4 ... - a bin lower than k. Over 1000
    inputs from just past 9 (the closed form's part), 8.5 (the compiled middle, kept below
    x) and 7, the block's histogram and counts are those of mpmath's errors, binned one by
    one."""
    from gelucheck.sweep.stats import BINS

    (impl,) = find("variants:quick_gelu", "gelu")
    n = 1000
    x = np.arange(start, start + n, dtype=np.uint32).view(np.float32)
    y = impl(x)
    exact = mp_exact_errors("gelu", x, y, 80)
    want = [0] * BINS
    for e in exact:
        k = 0 if e <= 0.5 else 1 if e < 1 else 2 + int(mpmath.floor(mpmath.log(e, 2)))
        want[min(k, BINS - 2)] += 1
    assert sum(want[2:]) > n // 10  # errors of 1 ulp and more, near whole numbers
    block = chunk.evaluate_block([impl], fastref.get_function("gelu"), start, start + n)
    (got,) = plain(block)["implementations"].values()
    assert got["histogram"] == want
    assert got["not_correctly_rounded"] == n - want[0]

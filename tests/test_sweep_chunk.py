"""A chunk of the sweep (sweep/chunk.py): its figures against the stored reference and a
planted error, and a run of closed-form spans scored as its blocks are."""

import numpy as np
import pytest

from gelucheck.backends import find, load_user
from gelucheck.checks import reference_data
from gelucheck.checks.regions import REGIONS, mask
from gelucheck.formats import FLOAT32
from gelucheck.sweep import chunk, loops
from gelucheck.sweep.stats import merge_all
from sweep_support import (
    plain,
    window_around_minimum,
)


@pytest.mark.parametrize("spec, function", [("scipy:x*ndtr", "gelu"), ("torch:F.gelu", "gelu"),
                                            ("torch:F.gelu", "gelu_grad"),
                                            ("torch:F.gelu", "gelu_tanh_grad")])
def test_chunk_equals_the_stored_reference_on_shared_inputs(spec, function):
    """Around x*: for the derivatives the hardest place, where their terms cancel."""
    if spec.startswith("torch"):
        pytest.importorskip("torch", reason="torch is not installed")
    impls = find(spec, function)
    lo, hi = window_around_minimum()
    swept = chunk.evaluate(impls, function, lo, hi).implementations[f"{spec}/{function}"].whole
    tab = reference_data.table("float32", "gelu")
    x = tab.x.astype(np.float64)
    shared = (x <= float(FLOAT32.from_bits(lo))) & (x >= float(FLOAT32.from_bits(hi - 1)))
    from gelucheck.ulp import ulp_error

    err = ulp_error(impls[0](tab.x[shared]), reference_data.exact(tab, function)[shared], FLOAT32)
    assert swept.n == np.count_nonzero(shared) == hi - lo
    # the fast reference is within 2^-40 relative, so within 2^-40 * 2^24 = 2^-16 ulps
    assert swept.max_ulp == pytest.approx(err.max(), abs=2.0**-16)
    assert swept.not_correctly_rounded == np.count_nonzero(err > 0.5)
    assert swept.sum_ulp == pytest.approx(err.sum(), abs=len(err) * 2.0**-16)


def test_a_planted_error_is_found():
    from sweep_impls import PLANTED

    impl = load_user("sweep_impls:planted", "gelu")
    r = chunk.evaluate([impl], "gelu", 0x3F800000, 0x3F900000).implementations
    stats = r[f"{impl.id}/gelu"].whole
    assert stats.worst_bits == PLANTED
    assert 0.5 < stats.max_ulp <= 1.5
    clean = load_user("sweep_impls:rounded_once", "gelu")
    base = chunk.evaluate([clean], "gelu", 0x3F800000, 0x3F900000).implementations
    assert stats.not_correctly_rounded == base[f"{clean.id}/gelu"].whole.not_correctly_rounded + 1


def test_histogram_and_regions_are_consistent():
    impls = find("scipy:x*erf", "gelu")  # erf's cancellation: errors of every size about -5
    r = chunk.evaluate(impls, "gelu", 0xC0A00000 - 3000, 0xC0A00000 + 3000)  # around x = -5
    s = r.implementations["scipy:x*erf/gelu"]
    assert s.whole.not_correctly_rounded > 1000
    assert sum(s.histogram) == s.whole.n == 6000
    assert s.histogram[0] == s.whole.n - s.whole.not_correctly_rounded
    assert set(s.regions) == {"x<-5", "-5<=x<-1"}
    x = FLOAT32.from_bits(np.arange(0xC0A00000 - 3000, 0xC0A00000 + 3000, dtype=np.uint32))
    for name, lo, hi in REGIONS:
        if name in s.regions:
            assert s.regions[name].n == np.count_nonzero(mask(x, lo, hi))


def _spans(blocks: list[tuple[int, int, bool]]) -> list[tuple[int, int]]:
    """block_plan' blocks, each run of closed-form spans cut into its spans."""
    return [(a, min(a + chunk.KNOWN_SPAN, b)) for first, b, _ in blocks
            for a in range(first, b, chunk.KNOWN_SPAN)]


def _assert_same_figures(whole, parts) -> None:
    """Two merged statistics of the same inputs are the same but for their timings, and
    their sums of errors to float64's rounding (a run's closed form sums at once what spans
    sum in parts)."""
    whole, parts = plain(whole), plain(parts)  # (without their timings)
    for key, want in parts["implementations"].items():
        got = whole["implementations"].get(key, {})
        for a, b in [(got, want)] + [(got.get("regions", {}).get(r, {}), r_want)
                                     for r, r_want in want.get("regions", {}).items()]:
            if "sum_ulp" in b:
                assert a.pop("sum_ulp") == pytest.approx(b.pop("sum_ulp"), rel=1e-12)
    assert whole == parts


def test_a_known_span_scores_as_its_blocks_do():
    """evaluate() takes a span known in closed form as one; the figures are those of its
    blocks of BLOCK merged (SciPy's x*ndtr, near 2^-40 and in the far left)."""
    from gelucheck.functions import get_function

    impls, f = find("scipy:x*ndtr", "gelu"), get_function("gelu")
    for start in (0x2B800000, 0xC1B00000):
        _assert_same_figures(chunk.evaluate(impls, f, start, start + chunk.KNOWN_SPAN),
                             merge_all([chunk.evaluate_block(impls, f, a, a + chunk.BLOCK)
                                        for a in range(start, start + chunk.KNOWN_SPAN,
                                                       chunk.BLOCK)]))
    with pytest.raises(ValueError, match="at most"):
        chunk.evaluate_block(impls, f, 0, chunk.KNOWN_SPAN + 1)


def test_a_span_longer_than_the_input_array_is_refused(monkeypatch):
    """chunk's span set above the input array's (a setting made in one module only): the
    spans' calls would see a slice of each span's inputs and its closed-form figures would
    count all of them - refused instead of scored."""
    from gelucheck.functions import get_function

    impls, f = find("scipy:x*ndtr", "gelu"), get_function("gelu")
    start = 0x50000000  # saturated: x itself, a closed-form run
    monkeypatch.setattr(chunk, "KNOWN_SPAN", 2 * chunk.KNOWN_SPAN)
    with pytest.raises(ValueError, match="input array holds 1 to"):
        chunk.evaluate(impls, f, start, start + 2 * chunk.KNOWN_SPAN)


@pytest.mark.parametrize("names", [["rounded_gelu"], ["off_gelu"], ["returns_its_input"],
                                   ["rounded_gelu", "in_place_gelu"],
                                   ["in_place_gelu", "off_gelu", "returns_its_input"]])
@pytest.mark.parametrize("edge, known_first", [(0x33000000, True), (0xC1A00000, False)])
def test_a_task_scores_as_its_blocks_do_with_inputs_of_their_own(names, edge, known_first,
                                                                 sweep_path):
    """evaluate() keeps one input array per task, and the test that a block's last
    implementation left it intact rewrites it as the next block's inputs: the figures are
    those of each block given inputs of its own - for outputs scored in closed form, outputs
    that need the reference after the rewrite (one ulp off), outputs in the inputs' own
    memory, and an implementation that writes to its inputs, last or first. Two closed-form
    spans, then blocks of the middle (below |x| = 2^-25), or the other way round (the far
    left, x <= -20: the next block longer than the array holds)."""
    from gelucheck.backends import load_user
    from gelucheck.functions import get_function

    impls, f = [load_user(f"sweep_impls:{name}", "gelu") for name in names], get_function("gelu")
    if known_first:
        start, stop = edge - 2 * chunk.KNOWN_SPAN, edge + 2 * chunk.MERGED_BLOCK
    else:
        start, stop = edge - 2 * chunk.MERGED_BLOCK, edge + 2 * chunk.KNOWN_SPAN
    blocks = chunk.block_plan(f, start, stop)
    run = blocks[0] if known_first else blocks[-1]  # the two spans: one run
    assert run[1] - run[0] == 2 * chunk.KNOWN_SPAN and run[2] and len(blocks) > 2
    whole = chunk.evaluate(impls, f, start, stop)
    _assert_same_figures(whole, merge_all([chunk.evaluate_block(impls, f, a, b)
                                           for a, b in _spans(blocks)]))
    if "in_place_gelu" in names:
        assert "modified its input in place" in whole.implementations[
            "user:sweep_impls:in_place_gelu/gelu"].error


@pytest.mark.parametrize("function", ["gelu", "phi", "gelu_grad"])
@pytest.mark.parametrize("start, spans", [(0x2B800000, 4),  # |x| in [2^-40, 2^-39): tiny
                                          (0xAB800000, 4),  # its negative side
                                          (0x2B812345, 3),  # a range's start, not a span's
                                          (0xC1C00000, 3),  # x = -24..: the far left
                                          (0x41C00000, 3)])  # x = 24..: the saturated right
def test_a_run_of_known_spans_scores_as_its_spans_do(function, start, spans):
    """Consecutive spans known in closed form go as one run (block_plan), each implementation
    called span by span and its figures computed once: they are those of each span evaluated
    alone and merged - the sums to float64's rounding of a longer sum - with the outputs at
    the worst input too. Correctly rounded outputs (SciPy's, rounded once), so every span
    matches the closed form."""
    from gelucheck.backends import load_user
    from gelucheck.functions import get_function

    impls = [load_user(f"sweep_impls:rounded_{function}", function)]
    f, stop = get_function(function), start + spans * chunk.KNOWN_SPAN
    assert chunk.block_plan(f, start, stop) == [(start, stop, True)]
    _assert_same_figures(chunk.evaluate(impls, f, start, stop),
                         merge_all([chunk.evaluate_block(impls, f, a, b)
                                    for a, b in _spans([(start, stop, True)])]))


def test_a_whole_known_task_is_planned_as_its_spans_merge():
    """block_plan takes a task wholly in one closed-form part and one region as one run at
    once: the plan is the one made span by span, for every task of 2^24 of every sweepable
    function (the far left, the right, the tiny binades and the middle alike), and for
    ranges that begin or end inside a span."""
    from gelucheck.functions import sweepable

    ranges = [(a, min(a + (1 << 24), b)) for a, b in chunk.finite_ranges()
              for a in range(a, b, 1 << 24)]
    ranges += [(0x41C01234, 0x41C01234 + 3 * chunk.KNOWN_SPAN), (0x2B800001, 0x2B900000)]
    for f in sweepable():
        for start, stop in ranges:
            assert chunk.block_plan(f, start, stop) == chunk._span_plan(f, start, stop), (
                f.name, hex(start))
        assert chunk.block_plan(f, 5, 5) == []


@pytest.mark.parametrize("start", [0x41C00000,  # x = 24..: x itself, consecutive encodings
                                   0xC1C00000,  # the far left: one constant, -0
                                   0x3F800000])  # x = 1..: the middle, against the reference
def test_outputs_in_strided_memory_score_as_contiguous_ones(start):
    """An implementation may return a view of a wider array: its outputs are tested and scored
    as the same outputs in an array of their own are (the tests of encodings read contiguous
    outputs two at a time, as 64-bit words)."""
    from gelucheck.backends import load_user
    from gelucheck.functions import get_function

    f, stop = get_function("gelu"), start + 2 * chunk.KNOWN_SPAN
    figures = []
    for name in ("rounded_gelu", "strided_gelu"):
        impl = load_user(f"sweep_impls:{name}", "gelu")
        assert impl(np.ones(4, dtype=np.float32)).flags.c_contiguous == (name == "rounded_gelu")
        figures.append(plain(chunk.evaluate([impl], f, start, stop))["implementations"][
            f"user:sweep_impls:{name}/gelu"])
    assert figures[0] == figures[1]


@pytest.mark.parametrize("names", [["planted_tiny"], ["rounded_gelu", "planted_tiny"],
                                   ["planted_tiny", "rounded_gelu"], ["raises_at_planted_tiny"],
                                   ["rounded_gelu", "raises_at_planted_tiny", "rounded_gelu_tanh"],
                                   ["returns_its_input", "planted_tiny"],
                                   ["planted_tiny", "returns_its_input"]])
def test_a_run_stops_where_outputs_leave_the_closed_form(names, monkeypatch):
    """A run of closed-form spans stops at the first span where an implementation's outputs
    are not the closed form's results (one ulp off at one input; x itself, not x/2) or where
    it raises: the spans before it are scored as a run, that span and the rest span by span -
    the figures those of each span alone, the error recorded. Each implementation is called
    once a span: the calls the run made on its last span are used, not made again - but for
    the one that raised, and for all of them where an output is the inputs' own memory."""
    import sweep_impls
    from gelucheck.backends import load_user
    from gelucheck.functions import get_function

    calls = []
    monkeypatch.setattr(sweep_impls, "CALLS", calls)
    impls = [load_user(f"sweep_impls:{name}", "gelu") for name in names]
    f, start = get_function("gelu"), 0x2B800000
    stop = start + 4 * chunk.KNOWN_SPAN
    assert start < sweep_impls.PLANTED_TINY < stop - chunk.KNOWN_SPAN
    whole = chunk.evaluate(impls, f, start, stop)
    counted = calls[:]
    _assert_same_figures(whole, merge_all([chunk.evaluate_block(impls, f, a, b)
                                           for a, b in _spans([(start, stop, True)])]))
    planted = next(k for k in whole.implementations if "planted_tiny" in k)
    if "raises" in planted:
        assert "planted" in whole.implementations[planted].error
    else:
        assert whole.implementations[planted].whole.worst_bits == sweep_impls.PLANTED_TINY
    hit = sweep_impls.PLANTED_TINY - (sweep_impls.PLANTED_TINY - start) % chunk.KNOWN_SPAN
    again = [hit] if "raises" in planted else []
    if names == ["planted_tiny", "returns_its_input"]:  # x itself stops the run at once
        again = [start]
    assert sorted(counted) == sorted([a for a, _ in _spans([(start, stop, True)])] + again)


@pytest.mark.parametrize("function, start", [("erf", 0x40000000), ("erf", 0xC0000000),
                                             ("gelu", 0x3C000000), ("gelu", 0xC0000000),
                                             ("gelu_tanh_grad", 0x3C000000)])
def test_merged_blocks_leave_the_closed_form_runs_where_they_were(function, start,
                                                                  monkeypatch):
    """Two compiled blocks in one aligned span are one block (chunk._merged), and a
    closed-form run still starts at the first block of COMPILED_BLOCK its closed form covers:
    the plan's closed-form runs are those of the plan unmerged, its other blocks cover the
    same encodings, and each merged one is aligned (without numba there is none)."""
    from gelucheck.functions import get_function

    f, stop = get_function(function), start + (1 << 24)
    merged = chunk.block_plan(f, start, stop)
    monkeypatch.setattr(chunk, "_merged", lambda function, plan: plan)
    unmerged = chunk.block_plan(f, start, stop)
    assert [e for e in merged if e[2]] == [e for e in unmerged if e[2]]

    def covered(plan):
        return [x for a, b, known in plan if not known for x in (a, b)]

    assert set(covered(unmerged)) >= set(covered(merged))  # merging drops inner edges only
    assert sum(b - a for a, b, _ in merged) == stop - start
    long = [(a, b) for a, b, known in merged if not known and b - a == chunk.MERGED_BLOCK]
    assert all(a % chunk.MERGED_BLOCK == 0 for a, _ in long)
    # merged where one compiled loop computes the reference: none without numba
    assert bool(long) == (loops.kernels() is not None)


@pytest.mark.skipif(loops.kernels() is None, reason="the erf family's sweep reference is "
                    "compiled (numba): pip install 'gelucheck[fast]'")
def test_erfs_closed_form_still_starts_an_eighth_past_its_far_edge():
    """erf's far part (|x| >= 6, ERF_FAR) is in closed form from the first aligned 2^18
    inputs wholly past 6: 6.125 (0x40c40000) - the block [6, 6.125) measured, as before
    blocks were merged; [6, 6.25) merged would have measured 2^18 inputs more in float64."""
    from gelucheck.functions import ERF

    plan = chunk.block_plan(ERF, 0x40000000, 0x41000000)
    assert (0x40C00000, 0x40C40000, False) in plan and plan[-1] == (0x40C40000, 0x41000000, True)

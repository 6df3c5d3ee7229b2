"""The sweep's typed statistics merged (sweep/stats.py): a task's blocks in one pass give the
bits that merging them two at a time, in order, gives - sums added one by one, the largest
error at its lowest encoding on a tie, the first failure kept."""
import pytest

from gelucheck.sweep.stats import (
    BINS,
    ChunkStats,
    Figures,
    ImplFailure,
    ImplStats,
    merge_all,
    total,
)


def _stats(sum_ulp: float, max_ulp: float, worst: int, region: str = "x<-5") -> ImplStats:
    figures = Figures(10, max_ulp, worst, sum_ulp, 10, 3)
    histogram = tuple([7, 3] + [0] * (BINS - 2))
    return ImplStats(figures, {region: figures}, max_ulp * 2.0**-20, worst, histogram,
                     exact=float(worst), computed=-float(worst), eval_s=sum_ulp)


def _chunk(start: int, **impls) -> ChunkStats:
    return ChunkStats("gelu", start, start + 10, 1, 0.5, impls)


def test_sums_add_one_by_one_in_order():
    """1 + 2^-53 rounds to 1 (a tie, to even), and so again: added one by one the sum is 1,
    where a compensated sum (the builtin sum's, from Python 3.12) gives 1 + 2^-52."""
    parts = [Figures(1, 0.5, k, s, 1, 0) for k, s in enumerate([1.0, 2.0**-53, 2.0**-53])]
    assert total(parts).sum_ulp == 1.0
    assert total([total(parts[:2]), parts[2]]).sum_ulp == 1.0
    assert total(parts).n == 3


def test_the_largest_error_at_its_lowest_encoding_whatever_the_order():
    parts = [Figures(1, 2.0, 50, 0.0, 1, 1), Figures(1, 2.0, 7, 0.0, 1, 1),
             Figures(1, 1.0, 3, 0.0, 1, 1)]
    for order in (parts, parts[::-1], parts[1:] + parts[:1]):
        assert (total(order).max_ulp, total(order).worst_bits) == (2.0, 7)


def test_a_task_merged_at_once_is_its_blocks_merged_two_at_a_time():
    """Three chunks, an implementation missing from one, regions met in different chunks:
    ChunkStats.combine against the left fold of pairwise merges, field for field."""
    a = _chunk(0, f=_stats(0.1, 1.0, 5), g=_stats(0.3, 0.5, 2))
    b = _chunk(10, f=_stats(0.2, 3.0, 15, region="-5<=x<-1"))
    c = _chunk(20, f=_stats(0.7, 3.0, 25), g=_stats(0.9, 4.0, 21, region="-1<=x<0"))
    at_once = ChunkStats.combine([a, b, c])
    assert at_once == ChunkStats.combine([ChunkStats.combine([a, b]), c]) == merge_all([c, a, b])
    f, g = at_once.implementations["f"], at_once.implementations["g"]
    assert list(at_once.implementations) == ["f", "g"]
    assert (f.whole.max_ulp, f.whole.worst_bits, f.exact, f.computed) == (3.0, 15, 15.0, -15.0)
    assert f.whole.sum_ulp == (0.1 + 0.2) + 0.7 and f.whole.n == 30
    assert list(f.regions) == ["x<-5", "-5<=x<-1"] and f.regions["x<-5"].n == 20
    assert f.histogram[:2] == (21, 9) and sum(f.histogram) == 30
    assert g.whole.worst_bits == 21 and set(g.regions) == {"x<-5", "-1<=x<0"}
    assert (at_once.start, at_once.stop, at_once.n_slow_reference) == (0, 30, 3)
    assert at_once.reference_s == 1.5


def test_the_first_failure_is_the_outcome():
    a = _chunk(0, f=_stats(0.1, 1.0, 5))
    b = _chunk(10, f=ImplFailure("first"))
    c = _chunk(20, f=ImplFailure("second"))
    assert ChunkStats.combine([a, b, c]).implementations["f"] == ImplFailure("first")


def test_nothing_to_merge_is_an_error():
    with pytest.raises(ValueError, match="no chunks"):
        ChunkStats.combine([])
    with pytest.raises(ValueError, match="no figures"):
        total([])
    assert merge_all([]) is None

"""sweep/cuts.py: where a block's sorted inputs cross edges, found without converting the
block to float64 - the same positions as the definitions, edges that float32 cannot hold
included, and runs of either sign in either order."""
import numpy as np
import pytest

from gelucheck.functions import get_function
from gelucheck.sweep import cuts, erf_reference, loops, phi_table
from gelucheck.sweep.inputs import encodings

# 1/3 and 0.7 are no float32: rounded the wrong way they would move a cut by one input
EDGES = [0.25, 1 / 3, 0.5, 0.7, 1.0, 1.5, 2.0, 2.9]


# each edge's nearest float32s and their neighbours: where a cut rounded the wrong way moves
_NEAR = np.unique(np.concatenate([
    np.nextafter(np.array(EDGES, dtype=np.float32), np.float32(way)) for way in (-np.inf, np.inf)]
    + [np.array(EDGES, dtype=np.float32)]))


def _runs(rng):
    """Ascending float32 magnitudes with repeats and values on and next to edges, as the four
    runs of one sign: ascending, descending, negated, negated and reversed."""
    n = int(rng.integers(1, 40))
    base = rng.uniform(0, 3, n).astype(np.float32)
    on_edge = rng.random(n) < 0.3
    base[on_edge] = _NEAR[rng.integers(0, len(_NEAR), n)][on_edge]
    base = np.sort(base)
    return base, base[::-1].copy(), -base, (-base)[::-1].copy()


def test_magnitude_cuts_are_the_positions_of_the_definition_in_every_order():
    """|x| ascending along x: the count of |x| < e for each edge; descending: the count of
    |x| >= e, from the highest edge - what splits x into runs between consecutive edges."""
    rng = np.random.default_rng(5)
    for _ in range(500):
        edges = sorted(set(rng.choice(EDGES, int(rng.integers(1, 5))).tolist()))
        for x in _runs(rng):
            magnitude = np.abs(x.astype(np.float64))
            if magnitude[0] <= magnitude[-1]:
                want = [int(np.count_nonzero(magnitude < e)) for e in edges]
            else:
                want = [int(np.count_nonzero(magnitude >= e)) for e in edges[::-1]]
            assert cuts.magnitude_cuts(x, edges) == want, (x, edges)
            assert cuts.magnitude_ascends(x) == (magnitude[0] <= magnitude[-1])


def test_value_parts_hold_the_inputs_between_consecutive_edges_in_either_order():
    """Part k of a run, at its positions in the run's own order, is every input with
    edges[k - 1] <= x < edges[k] (the ends unbounded), ascending run or descending."""
    rng = np.random.default_rng(7)
    signed = sorted({*EDGES, *(-e for e in EDGES), 0.0})
    bounds = [-np.inf, *signed, np.inf]
    for _ in range(300):
        for x in _runs(rng):
            parts, exact = cuts.value_parts(x, signed), x.astype(np.float64)
            assert len(parts) == len(signed) + 1
            for (a, b), lo, hi in zip(parts, bounds[:-1], bounds[1:]):
                inside = np.flatnonzero((exact >= lo) & (exact < hi))  # (in float32, a
                # Python float edge would be rounded first)
                assert list(range(a, b)) == inside.tolist(), (x, lo, hi)


@pytest.mark.parametrize("side", ["left", "right"])
def test_sorted_cuts_are_float64s_searchsorted(side):
    rng = np.random.default_rng(6)
    for _ in range(300):
        x = _runs(rng)[0]
        want = np.searchsorted(x.astype(np.float64), EDGES, side).tolist()
        assert cuts.sorted_cuts(x, EDGES, side) == want


def test_edges_beyond_float32_round_to_its_infinities_the_right_way():
    x = np.array([-3.0e38, 0.0, 3.0e38], dtype=np.float32)
    assert cuts.sorted_cuts(x, [-1e300, 1e300], "left") == [0, 3]
    assert cuts.sorted_cuts(x, [-1e300, 1e300], "right") == [0, 3]


def test_a_side_other_than_left_or_right_is_refused():
    with pytest.raises(ValueError, match="'left' or 'right'"):
        cuts.in_dtype([1.0], np.dtype(np.float32), "middle")


@pytest.mark.parametrize("negative", [False, True])
def test_erfs_fit_serves_each_input_from_its_own_interval(monkeypatch, negative):
    """A sweep block of erf across edges of its fit (a block of negative encodings descends
    in x): each call of erf_fit_block gets inputs of its own interval only - none evaluated
    beyond its interval's edge, where the fit's bound does not hold."""
    k = loops.erf_kernels()
    if k is None:
        pytest.skip("numba is not installed (pip install 'gelucheck[fast]'): no compiled loops")
    served, fit = [], k.erf_fit_block

    def spy(x, row, centre, *rest):
        served.append((abs(centre), np.abs(x.astype(np.float64))))
        return fit(x, row, centre, *rest)

    monkeypatch.setattr(k, "erf_fit_block", spy)
    half = phi_table.INTERVAL / 2
    for edge in (0.5, 1.0, 4.25):  # crossed by 2^18 encodings from just below it
        first = int(np.float32(-edge if negative else edge).view(np.uint32)) - 1000
        x = encodings(first, first + (1 << 18)).view(np.float32)
        served.clear()
        erf_reference.doubts(get_function("erf"), x, np.empty(len(x)), np.empty(len(x)))
        assert len(served) == 2 and sum(len(m) for _, m in served) == len(x)
        for centre, magnitude in served:
            assert (magnitude >= centre - half).all() and (magnitude < centre + half).all()

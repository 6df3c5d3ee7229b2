"""The float64 search's scoring of whole cells (search/score.py's fused_ulps, kernels.score,
task.py's blocks): the same bits as the general way - reference.values, then score.ulps, over
the whole cell at once - which test_search_reference.py holds to mpmath."""
import math

import numpy as np
import pytest
from scipy import special

from gelucheck.functions import get_function
from gelucheck.search import reference as search_reference
from gelucheck.search import task
from gelucheck.search.cells import Cell
from gelucheck.search.reference import Reference
from gelucheck.search.score import fused_ulps, ulps

pytest.importorskip("numba", reason="the fused scoring is compiled by numba (the fast extra)")

LEVEL = 40  # cells of 2^12 encodings
# (function, a double at the cell, the function's own values in SciPy, whether the compiled
# loop scores the cell): ordinary cells, values just below a power of two (erf near 5.9,
# erfc near 0.4769 from the left of 2^-1), and the places handed back to the general way -
# values within the reference's bound (2^-13 ulps) of a power of two, whose side the row
# decides (1 - erf(7) = erfc(7) = 4.2e-23), and values whose ulp is at or near the subnormal
# quantum (erfc(26.55) and Φ(-37.5) near 2^-1022, erf of a subnormal)
CELLS = [("erfc", 1.2498, special.erfc, True), ("erf", -0.3, special.erf, True),
         ("erf", 5.9, special.erf, True), ("erfc", 0.47693627620446977, special.erfc, True),
         ("gelu", -0.7517915246935645, lambda x: x * special.ndtr(x), True),
         ("erf", 7.0, special.erf, False), ("erfc", 26.55, special.erfc, False),
         ("phi", -37.5, special.ndtr, False), ("erf", 7 * 2.0**-1074, special.erf, False)]


def _outputs(f, x):
    """The library's values, some moved one or two ulps, one infinite, one NaN, one far off."""
    y = f(x)
    y[::3] = np.nextafter(y[::3], np.inf)
    y[1::5] = np.nextafter(np.nextafter(y[1::5], -np.inf), -np.inf)
    y[7], y[11], y[13] = np.inf, np.nan, 1e300
    return y


@pytest.mark.parametrize(("name", "at", "library", "fused"), CELLS)
def test_the_fused_scoring_gives_the_bits_of_the_general_one(name, at, library, fused):
    reference = Reference(get_function(name))
    x = Cell.holding(at, LEVEL).inputs(None, 0)
    y = _outputs(library, x)
    error = np.full(x.shape[0], -1.0)
    assert fused_ulps(reference, x, y, error) == fused
    if fused:
        assert np.array_equal(error, ulps(y, reference.values(x))[0])


def test_inputs_that_are_not_a_whole_cells_are_handed_back():
    reference = Reference(get_function("erf"))
    x = Cell.holding(0.3, LEVEL).inputs(None, 0)
    for unfit in (x[::-1], np.concatenate([x, -x]), np.concatenate([[0.0], x])):
        assert not fused_ulps(reference, unfit, special.erf(unfit), np.empty(unfit.shape[0]))


def _erfc(x):
    return special.erfc(x)


def _infinite(x):
    return np.full_like(x, np.inf)


@pytest.mark.parametrize("device", ["cpu", "gpu"])
@pytest.mark.parametrize("kernel", [_erfc, _infinite])
def test_a_whole_cell_in_blocks_keeps_the_largest_errors_of_the_cell_at_once(kernel, device,
                                                                              monkeypatch):
    """Blocks of WHOLE_BLOCK and their merged candidates against one pass of the general way
    over the cell: the same KEPT inputs, the same figures, ties (an infinite output
    everywhere) kept for the first inputs; on the CPU a call per block, on another device
    one call per cell."""
    monkeypatch.setattr(task, "WHOLE_BLOCK", 1 << 12)
    function = get_function("erfc")
    cell = Cell.holding(1.2498, 38)  # 2^14 encodings: four blocks
    x = cell.inputs(None, 0)
    error, doubt = ulps(kernel(x), Reference(function).values(x))
    top = task.largest(error)
    impl = _Impl(kernel, device)
    for compiled in (True, False):
        if not compiled:
            monkeypatch.setattr(search_reference, "compiled_kernels", lambda: None)
        impl.calls = 0
        (result,) = task.evaluate(impl, Reference(function), [cell], None, 0)
        assert impl.calls == (4 if device == "cpu" else 1)
        assert result.evaluated == x.shape[0]
        assert [c.x for c in result.worst] == [float(x[i]) for i in top]
        assert [(c.error, c.doubt) for c in result.worst] == [
            (float(error[i]), float(doubt[i])) for i in top]
    if kernel is _infinite:
        assert [c.x for c in result.worst] == [float(v) for v in x[:task.KEPT]]
    else:
        assert all(math.isfinite(c.error) for c in result.worst)


class _Impl:
    def __init__(self, kernel, device):
        self.kernel, self.device, self.calls = kernel, device, 0

    def __call__(self, x):
        self.calls += 1
        return self.kernel(x.copy())

"""The closed forms of the sweep (sweep/known.py): the far left, the right and the tiny
part, against mpmath, and where they do not apply."""

import mpmath
import numpy as np
import pytest

from gelucheck.formats import FLOAT32
from gelucheck.reference.mpref import correctly_rounded
from gelucheck.sweep import chunk, edges, fastref, reference, scoring
from gelucheck.sweep.known import known_part
from sweep_support import (
    EXACT_PART_BLOCKS,
    FUNCTIONS,
    TINY_BLOCKS,
    known_tiny_edge,
    mp_errors,
    plain,
)


@pytest.mark.parametrize("function", FUNCTIONS)
@pytest.mark.parametrize("where", sorted(EXACT_PART_BLOCKS))
def test_the_exact_part_is_the_reference_rounded(function, where):
    """known_part stands in for the reference where its results are a signed zero,
    1 or x: those must be the reference's float64 values rounded, signs of zero included -
    and the float64 values lie off them on the exact value's side (ONE_DOWN's comment): the
    next float64 beyond 1 or x, TAIL_FLOOR beyond 0 (the side by mpmath)."""
    from gelucheck.functions import get_function

    start = EXACT_PART_BLOCKS[where]
    x = np.arange(start, start + chunk.BLOCK, dtype=np.uint32).view(np.float32)
    known = known_part(function, x)
    v, _, _ = reference.values(function, x, monotone=True)
    assert known is not None and known.offset == known.slope == 0
    results = known.expected(x)
    assert np.array_equal(results.view(np.uint32), v.astype(np.float32).view(np.uint32))
    r = results.astype(np.float64)
    # the exact value's side of the results at the block's ends (the top binade's as
    # 20.25's: the same saturated side, where mpmath's erfc would take minutes)
    probe = x if where != "huge" else np.arange(EXACT_PART_BLOCKS["right"], EXACT_PART_BLOCKS[
        "right"] + chunk.BLOCK, dtype=np.uint32).view(np.float32)
    f, expected = get_function(function), known.expected(probe)
    with mpmath.workdps(400):  # Φ(20.25) = 1 - 1e-91, the tanh form 1 - 1e-271 there
        sides = {int(mpmath.sign(f.mp(mpmath.mpf(float(probe[i]))) - float(expected[i])))
                 for i in (0, len(x) - 1)}
    (side,) = sides
    assert side != 0
    beyond = np.where(r == 0, fastref.TAIL_FLOOR, np.abs(np.nextafter(r, side * np.inf) - r))
    assert np.array_equal(v, r + side * beyond)


@pytest.mark.parametrize("function", [*FUNCTIONS, "erfc"])
@pytest.mark.parametrize("where", [*sorted(TINY_BLOCKS), "below-edge", "below-edge-power"])
def test_tiny_closed_form_is_mpmath_s(function, where):
    """Near zero the expected results are the correctly rounded ones and the closed-form
    figures - sum, largest error and where, largest absolute error - are mpmath's, on a run
    of 512 inputs from the block's start (a binade's first float for "power"); "below-edge":
    the last 512 floats below the function's KNOWN_TINY, "-power" the first of that binade,
    negative."""
    edge = known_tiny_edge(function)
    start = {**TINY_BLOCKS, "below-edge": edge - 512,
             "below-edge-power": (edge - 0x800000) | 0x80000000}[where]
    bits = np.arange(start, start + 512, dtype=np.uint32)
    x = bits.view(np.float32)
    known = known_part(function, x)
    assert known is not None
    for i in (0, 1, 255, 511):
        assert known.expected(x).view(np.uint32)[i] == correctly_rounded(
            function, float(x[i]), FLOAT32).bits
    errors = mp_errors(function, x, known.expected(x))
    (name, _), = chunk.region_slices(x)
    got = plain(scoring.known_figures(known, x, int(bits[0]), name))
    assert got["not_correctly_rounded"] == 0 and errors.max() < 0.5
    assert got["histogram"][0] == got["n"] == got["n_finite"] == 512
    assert got["sum_ulp"] == pytest.approx(errors.sum(), rel=1e-9)
    assert got["max_ulp"] == pytest.approx(errors.max(), rel=1e-9)
    if function != "phi_grad":  # φ's error is constant to 2^-36 ulp there: its first input
        assert got["worst_bits"] == bits[int(np.argmax(errors))]
    assert got["regions"][name]["sum_ulp"] == got["sum_ulp"]
    with mpmath.workdps(40):  # the exact value reported at the worst input is mpmath's
        worst = float(FLOAT32.from_bits(got["worst_bits"]))
        assert got["exact"] == pytest.approx(
            float(fastref.get_function(function).mp(mpmath.mpf(worst))), rel=2.0**-50)


@pytest.mark.parametrize("function", [*FUNCTIONS, "erfc"])
def test_no_known_part_where_the_reference_is_computed(function):
    edge = edges.far_left(fastref.get_function(function))  # the block ends just past it
    start = int(np.float32(edge).view(np.uint32)) - chunk.BLOCK // 2
    x = np.arange(start, start + chunk.BLOCK, dtype=np.uint32).view(np.float32)
    assert known_part(function, x) is None
    edge = known_tiny_edge(function)
    for start in (0x3F800000,  # x near 1: computed everywhere
                  edge - 8, edge, edge | 0x80000000,  # across and past KNOWN_TINY
                  0x2B800000 - 8,  # across a binade near zero
                  0x00000000, 0x01000000 - 8):  # subnormals and the lowest binades
        x = np.arange(start, start + chunk.BLOCK, dtype=np.uint32).view(np.float32)
        assert known_part(function, x) is None, hex(start)

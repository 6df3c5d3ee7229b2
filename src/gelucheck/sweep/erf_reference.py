"""The sweep's fast float64 reference for erf and erfc (docs/design.md, The sweep of erf and
erfc): compiled loops (sweep/erf_kernels.py) - erf's series and, from |x| = 1/8, its fit
(phi_table.ERF); erfc's middle from the C library's double erfc -, whose error this module
checks against the stored mpmath values before a sweep relies on it, with Arb (or mpmath)
for the inputs whose float64 value lies too close to a float32 rounding boundary for BOUND -
as for Φ."""
from __future__ import annotations

from functools import cache

import numpy as np

from ..errors import UsageError
from ..formats import FLOAT32
from ..functions import ERF, ERFC, Function
from . import loops, phi_table
from .constants import ERF_FAR, ERF_TINY, ERFC_RIGHT, TAIL_FLOOR, TWO_OVER_SQRT_PI
from .cuts import magnitude_ascends, magnitude_cuts, value_parts
from .reference import SweepSpec

FUNCTIONS = (ERF, ERFC)  # what its loops compute (the rows name this module)
# |erf| >= ERF_FAR is 1 - 2.2e-17 inside (-1, 1); erfc from ERFC_RIGHT on is below 2^-200
# (TAIL_FLOOR), erfc <= -ERF_FAR is 2 less 2.2e-17: closed forms there. Below ERF_TINY erf's
# v is 2x/√π in float64 (tiny_block), whose product, unit and doubt scale with x's binade
# exactly: those blocks replay an earlier binade's (sweep/replay.py). erfc below ERFC_TINY
# rounds to 1 (|2x/√π| < 0.57·2^-25, under half its ulp either side), its error |2x/√π|
# in ulps to 2^-53 (the next term, x²/3, relative): a closed form (known.py)
ERFC_TINY = 2.0**-26
SPECS = {ERF: SweepSpec(-ERF_FAR, ERF_FAR, scaled_below=ERF_TINY,
                       scaled_slope=TWO_OVER_SQRT_PI, mirrored=True),
         ERFC: SweepSpec(-ERF_FAR, ERFC_RIGHT, known_tiny=ERFC_TINY,
                         tiny_slope=-TWO_OVER_SQRT_PI, tiny_power=1, tiny_value=1.0)}
# The float64 value's error, relative, that the doubt test allows: glibc documents its
# double erf and erfc within 1 and 2 ulps (2^-52, 2^-51) on x86_64; check_library holds the
# library in use within BOUND / CHECK_MARGIN at every stored float32 sample.
BOUND = 2.0**-46
CHECK_MARGIN = 16
if phi_table.ERF.intervals * phi_table.INTERVAL != ERF_FAR:  # erf's fit reaches the far part
    raise RuntimeError("phi_table.ERF must end at ERF_FAR")
# where each function's middle (SERIES_EDGE <= |x|, short of the closed forms) comes from
MIDDLE = {ERF: "erf's fit (phi_table.ERF)", ERFC: "the C library's double erfc"}


def require(function: Function) -> None:
    """A clear error, before any work, where the erf family's sweep cannot run here."""
    if function not in FUNCTIONS:
        return
    if loops.erf_kernels() is None:
        raise UsageError(f"no exhaustive sweep of {function.name} without numba: its reference "
                         "calls the C library's double erf in a compiled loop; pip install "
                         "'gelucheck[fast]'")
    worst, at = library_error(function)
    if worst > BOUND / CHECK_MARGIN:
        raise UsageError(
            f"no exhaustive sweep of {function.name} here: its float64 reference "
            f"({MIDDLE[function]} from |x| = 1/8 on) errs by {worst:.3g} (relative) at x = "
            f"{at!r} of the stored float32 samples, beyond the {BOUND / CHECK_MARGIN:.3g} the "
            "sweep's proof allows (docs/design.md, The sweep of erf and erfc)")


@cache
def library_error(function: Function) -> tuple[float, float]:
    """(the largest relative error of the float64 values at gelucheck's stored float32
    samples of the function, where it is worst), against their mpmath values."""
    from ..checks.reference_data import table

    stored = table(FLOAT32, function)
    x = stored.x.astype(np.float32)
    order = np.argsort(x, kind="stable")  # ascending, as fill takes them (NaN last)
    x, exact = x[order], stored.exact(function).astype(np.float64)[order]
    v, unit = np.empty(len(x)), np.empty(len(x))
    fill(function, x, v, unit)
    # (where the exact value is below TAIL_FLOOR, v is TAIL_FLOOR: far below any quantum)
    finite = np.isfinite(x) & (np.abs(exact) > TAIL_FLOOR)
    error = np.abs(v[finite] - exact[finite]) / np.abs(exact[finite])
    worst = int(np.argmax(error))
    return float(error[worst]), float(x[finite][worst])


def compiled_run(function: Function, x: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(v, unit, doubt) of any monotone run, its loops' (SweepReference): None without
    numba (require has refused the sweep then)."""
    if loops.erf_kernels() is None:
        return None
    v, unit = np.empty(len(x)), np.empty(len(x))
    return v, unit, doubts(function, x, v, unit)


def one_compiled_run(function: Function, a: float, b: float) -> bool:
    """Its loops take any monotone run (SweepReference)."""
    return loops.erf_kernels() is not None


def relative_bound(function: Function) -> float:
    return BOUND


def warm(functions: tuple[Function, ...]) -> None:
    """Its loops made ready for these functions (SweepReference): an input in each part, so
    that no worker loads one inside a timed block (each from numba's disk cache, once a
    process, costs as much as a block's work)."""
    compiled = loops.erf_kernels()
    if compiled is None:
        return
    magnitudes = [2.0**-140, compiled.TINY / 2, *(edge / 2 for edge, _ in compiled.SERIES_PIECES),
                  0.5, 2 * ERF_FAR]  # the tiny part, the series' pieces, the fit, the far part
    x = np.array(sorted([*(-m for m in magnitudes), *magnitudes]), dtype=np.float32)
    v, unit = np.empty(len(x)), np.empty(len(x))
    for function in functions:
        fill(function, x, v, unit)


def fill(function: Function, x: np.ndarray, v: np.ndarray, unit: np.ndarray) -> np.ndarray:
    """v and unit at monotone float32 inputs x (or float64 holding float32 values), as
    fastref.fill gives them (SweepReference); returns the indices whose rounding the bound
    leaves open, for
    the proofs."""
    return np.flatnonzero(doubts(function, x, v, unit))


def doubts(function: Function, x: np.ndarray, v: np.ndarray, unit: np.ndarray) -> np.ndarray:
    """fill's v and unit in x's own order (ascending or descending: a block of negative
    encodings descends), and where each v is in doubt. The parts |x| < TINY and |x| <
    SERIES_EDGE in loops of their own, which vectorize; the rest calls the C library (or its
    closed forms) input by input. x is taken as contiguous float32: one compiled loop each."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    compiled = loops.erf_kernels()
    if compiled is None:
        require(function)  # raises: no NumPy path for the erf family
    doubt = np.empty(len(x), dtype=np.bool_)
    complement = function == ERFC
    # the parts: the middle left, the series' pieces (|x| descending), the tiny part, the
    # series' pieces (ascending), the middle right
    pieces = compiled.SERIES_PIECES
    edges = ([-e for e, _ in pieces[::-1]] + [-compiled.TINY, compiled.TINY]
             + [e for e, _ in pieces])
    series = [compiled.SERIES_LOOPS[t] for _, t in pieces]
    series_of = [None, *series[::-1], None, *series, None]  # each part's loop, if a series'
    for k, (a, b) in enumerate(value_parts(x, edges)):
        if b <= a:
            continue
        part = (x[a:b], BOUND, v[a:b], unit[a:b], doubt[a:b])
        if k == len(pieces) + 1:
            ends = (abs(float(x[a])), abs(float(x[b - 1])))
            subnormal = bool(min(ends) < 2.0**-125 or np.signbit(x[a]) != np.signbit(x[b - 1]))
            compiled.tiny_block(part[0], complement, BOUND, subnormal, *part[2:])
        elif (loop := series_of[k]) is not None:
            loop(part[0], complement, *part[1:])
        elif complement:
            compiled.erfc_block(*part)
        else:
            _erf_middle(*part)
    return doubt


# |x| where each interval of phi_table.ERF ends, the last at ERF_FAR
_FIT_EDGES = [(k + 1) * phi_table.INTERVAL for k in range(phi_table.ERF.intervals)]


def _erf_middle(x: np.ndarray, bound: float, v: np.ndarray, unit: np.ndarray,
                doubt: np.ndarray) -> None:
    """erf at inputs of one sign with |x| >= SERIES_EDGE (|x| monotone): from erf's fit,
    interval by interval, below ERF_FAR; its closed form (erf_far_block) from there on."""
    compiled = loops.erf_kernels()
    cuts = [0, *magnitude_cuts(x, _FIT_EDGES), len(x)]
    intervals = range(len(_FIT_EDGES) + 1)  # the last: |x| >= ERF_FAR
    if not magnitude_ascends(x):
        intervals = intervals[::-1]
    rows = phi_table.ERF.rows()
    for k, a, b in zip(intervals, cuts[:-1], cuts[1:]):
        if b <= a:
            continue
        if k == len(_FIT_EDGES):
            compiled.erf_far_block(x[a:b], v[a:b], unit[a:b], doubt[a:b])
        else:
            compiled.erf_fit_block(x[a:b], rows[k], phi_table.centre(k), bound, v[a:b],
                                   unit[a:b], doubt[a:b])

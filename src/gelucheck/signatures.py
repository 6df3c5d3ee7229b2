"""Defect signatures: why an implementation is wrong, read off one measurement - its outputs,
the correctly rounded values and the exact ones at the stored inputs, the function's row and
the format (docs/design.md, Defect signatures). Each detector is a small function that names
a mechanism, with its evidence (how many inputs, the first and the worst, the region) and one
sentence a user can act on; ``diagnose`` runs them all."""
from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources

import numpy as np

from .checks.regions import region_of
from .errors import GelucheckError
from .formats import FORMATS, Format, narrow
from .functions import (
    CDF,
    COMPLEMENT,
    DERIVATIVE,
    ODD,
    PDF,
    X_TIMES_CDF,
    Function,
)
from .results import Signature

# A loss of relative accuracy this large (|y - f| >= half of |f|) is total: the digits are gone.
TOTAL_LOSS = 0.5
# A tail's cancellation: at least this many inputs, and this share of the tail inputs beyond
# where it starts (it grows toward the tail; a few stray misroundings are not it)
TAIL_MINIMUM, TAIL_SHARE = 3, 0.8
# A narrower format's rounding: this share of the body's outputs lie on its grid, where the
# correctly rounded values do not (at least LOW_MINIMUM of them)
LOW_SHARE, LOW_MINIMUM = 0.9, 50
# ...or the body's median error from 1/256 to 16 times the narrower rounding's scale, 2^(p - p')
# (a constant in it costs less than a whole step), where
# that scale is at least SCALE_FLOOR ulps
SCALE_FLOOR = 256.0
# Errors of one sign: this share of the misrounded outputs of the body, at least BIASED_MINIMUM
# of them and BIASED_FRACTION of the body (a directed rounding misrounds about half of it; a
# good kernel's few misroundings may lean one way without being one)
BIASED_SHARE, BIASED_MINIMUM, BIASED_FRACTION = 0.95, 20, 0.2
# The body, where a rounding's direction or grid shows without the tails' own mechanisms
BODY = (0.125, 4.0)
# Within this of x* GELU lies level to within a few ulps: not-monotone leaves it out
MINIMUM_FLOOR = 2.0**-6
# Below the minimum by more than this (ulps) is out of range
MINIMUM_ULPS = 4.0
# Turning back between neighbouring outputs this accurate (ulps) is a seam
SEAM_ULPS = 4.0
# Flushed subnormals: subnormal correctly rounded values at least this many quanta from 0, of
# which at least FLUSH_SHARE are returned as 0 (or the smallest normal)
FLUSH_QUANTA, FLUSH_SHARE = 4, 0.5


@cache
def sentences() -> dict[str, dict[str, str]]:
    """{signature: {variant: sentence}}: the words each signature is printed with."""
    path = resources.files("gelucheck") / "data" / "signatures.toml"
    try:
        return tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise GelucheckError(f"{path}: not a table of signature sentences ({exc})") from None


def advice(name: str, variant: str = "advice", **fields) -> str:
    """The sentence signature ``name`` is printed with (data/signatures.toml), filled in."""
    return sentences()[name][variant].format(**fields)


@dataclass
class Measured:
    """What the detectors read: float64 views of one measurement."""

    function: Function
    fmt: Format
    x: np.ndarray
    y: np.ndarray
    rounded: np.ndarray
    exact: np.ndarray
    errors: np.ndarray  # ulps
    order: np.ndarray | None = None  # the inputs' ascending order, where known already

    def evidence(self, where: np.ndarray, name: str, advice: str,
                 detail: str = "") -> Signature | None:
        if not where.any():
            return None
        idx = np.flatnonzero(where)
        worst = float(self.x[idx[int(np.argmax(self.errors[idx]))]])  # (a NaN error first)
        first = float(self.x[idx[int(np.argmin(np.abs(self.x[idx])))]])  # where it begins,
        return Signature(name, int(idx.size), first, worst,  # coming from 0
                         region_of(worst), advice, detail)

    def lost(self) -> np.ndarray:
        """Total loss of relative accuracy where the value is a normal number."""
        normal = np.isfinite(self.exact) & (np.abs(self.exact) >= self.fmt.smallest_normal)
        return normal & np.isfinite(self.y) & (np.abs(self.y - self.exact)
                                               >= TOTAL_LOSS * np.abs(self.exact))


def flush_to_zero(m: Measured) -> Signature | None:
    quantum = 2.0**m.fmt.quantum_exponent
    subnormal = (np.abs(m.rounded) < m.fmt.smallest_normal) & (m.rounded != 0)
    deep = subnormal & (np.abs(m.rounded) >= FLUSH_QUANTA * quantum)
    flushed = subnormal & ((m.y == 0) | (np.abs(m.y) == m.fmt.smallest_normal))
    if not deep.any() or (flushed & deep).sum() < FLUSH_SHARE * deep.sum():
        return None
    # the normal values just above are right: a flush, not a cancellation reaching this far
    near = (np.abs(m.rounded) >= m.fmt.smallest_normal) & (np.abs(m.rounded) <
                                                            2.0**8 * m.fmt.smallest_normal)
    if near.any() and (m.lost() & near).sum() > (1 - FLUSH_SHARE) * near.sum():
        return None
    return m.evidence(flushed, "flush-to-zero", advice("flush-to-zero"))


def overflow(m: Measured) -> Signature | None:
    where = np.isinf(m.y) & np.isfinite(m.exact) & np.isfinite(m.x)
    return m.evidence(where, "overflow", advice("overflow"))


def nan_at_infinity(m: Measured) -> Signature | None:
    where = np.isnan(m.y) & np.isinf(m.x)
    return m.evidence(where, "nan-at-infinity", advice("nan-at-infinity"))


def nan(m: Measured) -> Signature | None:
    where = np.isnan(m.y) & np.isfinite(m.x) & ~np.isnan(m.exact)
    return m.evidence(where, "nan", advice("nan"))


def _tail_sides(function: Function) -> tuple[bool, bool]:
    """(left, right): the tails where the function decays to 0."""
    family = function.family
    return (family in (CDF, X_TIMES_CDF, DERIVATIVE, PDF), family in (PDF, COMPLEMENT))


def tail_cancellation(m: Measured) -> Signature | None:
    normal = np.isfinite(m.exact) & (np.abs(m.exact) >= m.fmt.smallest_normal)
    lost = m.lost()
    left, right = _tail_sides(m.function)
    found = np.zeros(len(m.x), dtype=bool)
    for side, on in ((-1.0, left), (1.0, right)):
        if not on:
            continue
        tail = normal & (side * m.x >= 1.0)
        hit = lost & tail
        if hit.sum() < TAIL_MINIMUM:
            continue
        start = np.min(side * m.x[hit])  # where the loss begins, going out
        beyond = tail & (side * m.x >= start)
        if hit.sum() >= TAIL_SHARE * beyond.sum():
            found |= hit
    return m.evidence(found, "tail-cancellation", advice("tail-cancellation"))


def absolute_error(m: Measured) -> Signature | None:
    """Total loss of relative accuracy toward x = 0, where the function itself goes to 0
    (erf, GELU) and its values are normal numbers: a kernel whose error is absolute."""
    if m.function.family not in (ODD, X_TIMES_CDF):
        return None
    hit = m.lost() & (np.abs(m.x) < 1.0)
    if hit.sum() < TAIL_MINIMUM:
        return None
    return m.evidence(hit, "absolute-error", advice("absolute-error"))


def _body(m: Measured) -> np.ndarray:
    lo, hi = BODY
    return (np.abs(m.x) >= lo) & (np.abs(m.x) <= hi) & np.isfinite(m.y) & np.isfinite(m.exact) \
        & (m.exact != 0)


def low_precision(m: Measured) -> Signature | None:
    body = _body(m)
    narrower = sorted((f for f in FORMATS.values() if f.precision < m.fmt.precision),
                      key=lambda f: f.precision)  # the narrowest first: its grid is inside
    for n in narrower:
        inside = body & (np.abs(m.rounded) < n.max_finite) & (np.abs(m.rounded) >=
                                                               n.smallest_normal)
        idx = np.flatnonzero(inside)  # (narrowing only these: it is the costly part)
        on_grid = narrow(m.y[idx], n).astype(np.float64) == m.y[idx]
        rounded_on_grid = narrow(m.rounded[idx], n).astype(np.float64) == m.rounded[idx]
        candidates = ~rounded_on_grid
        if candidates.sum() < LOW_MINIMUM:
            continue
        if (on_grid & candidates).sum() >= LOW_SHARE * candidates.sum():
            where = np.zeros(len(m.x), dtype=bool)
            where[idx[candidates & on_grid & (m.y[idx] != m.rounded[idx])]] = True
            return m.evidence(where, "low-precision",
                              advice("low-precision", narrow=n.name, format=m.fmt.name),
                              detail=f"{n.name} inside {m.fmt.name}")
    # off the narrower grid, yet with its rounding's error: constants or steps in the narrower
    # format (the widest narrower format whose scale the body's median error matches)
    errors = m.errors[body]
    if errors.size < LOW_MINIMUM:
        return None
    median = float(np.median(errors))
    for n in sorted(narrower, key=lambda f: -f.precision):
        scale = 2.0 ** (m.fmt.precision - n.precision)
        # (a scale of a few ulps is any rough kernel's: bfloat16 inside float16 is 8)
        if scale >= SCALE_FLOOR and scale / 256 <= median <= scale * 16:
            return m.evidence(body & (m.errors >= scale / 256), "low-precision",
                              advice("low-precision", "scale", narrow=n.name,
                                     format=m.fmt.name, median=f"{median:.3g}"),
                              detail=f"{n.name} inside {m.fmt.name}")
    return None


def biased(m: Measured) -> Signature | None:
    body = _body(m)
    wrong = body & (m.y != m.rounded)
    if wrong.sum() < max(BIASED_MINIMUM, BIASED_FRACTION * body.sum()):
        return None
    outward = (np.abs(m.y) > np.abs(m.exact))[wrong]
    share = max(outward.mean(), 1 - outward.mean())
    if share < BIASED_SHARE:
        return None
    direction = "away from zero" if outward.mean() > 0.5 else "toward zero"
    return m.evidence(wrong, "biased", advice("biased", direction=direction), detail=direction)


def out_of_range(m: Measured) -> Signature | None:
    where = m.function.impossible(m.x, m.y)
    said = advice("out-of-range")
    if m.function.has_minimum:
        value = float(narrow(np.array([_minimum(m.function)[1]]), m.fmt)[0])
        # more than MINIMUM_ULPS below the rounded minimum: a kernel good to a few ulps
        # misrounds that far at x*, which is no overshoot
        below = value - MINIMUM_ULPS * float(m.fmt.ulp_of(np.array([value]))[0])
        where = where | (np.isfinite(m.y) & (m.y < below))
        said = advice("out-of-range", "minimum", ulps=f"{MINIMUM_ULPS:g}")
    return m.evidence(where, "out-of-range", said)


_INCREASING = {CDF: 1, ODD: 1, COMPLEMENT: -1}


@cache
def _minimum(function: Function) -> tuple[float, float]:
    """(x*, f(x*)) as floats, solved once per function (mpmath's findroot)."""
    from .reference.mpref import minimum

    x, value = minimum(function, 40)
    return float(x), float(value)


def not_monotone(m: Measured) -> Signature | None:
    """Descents between neighbouring inputs of a function that does not descend there (its
    correctly rounded values do not): Φ, erf, and GELU right of x* rise, erfc falls - by more
    than an ulp, which neighbours misrounded by an ulp each may wobble by - between outputs
    within SEAM_ULPS of correct."""
    family = m.function.family
    if family in _INCREASING:
        direction = float(_INCREASING[family])
        start = -math.inf
    elif family == X_TIMES_CDF and m.function.has_minimum:
        # rising right of x*, and off the minimum's floor, where the values lie level
        direction, start = 1.0, _minimum(m.function)[0] + MINIMUM_FLOOR
    else:
        return None
    order = m.order if m.order is not None else np.argsort(m.x, kind="stable")
    xs = m.x[order]
    order = order[np.searchsorted(xs, start, "left"):]  # (NaN sorts last: dropped below)
    y, r = m.y[order], m.rounded[order]
    # where the outputs are accurate (a seam between two good paths): large errors turn back
    # as a consequence, which their own figures and signatures say
    ok = np.isfinite(m.x[order]) & np.isfinite(y) & (m.errors[order] <= SEAM_ULPS)
    y, r, order = y[ok], r[ok], order[ok]
    if y.size < 2:
        return None
    step = direction * (y[1:] - y[:-1])
    # the rounded values rise here; where they stay level (as about x*), outputs within an
    # ulp of them wobble by rounding noise, but one that stands two or more ulps off its
    # rounded value and below its neighbour turns back all the same
    rise = direction * (r[1:] - r[:-1])
    with np.errstate(invalid="ignore"):
        off = np.abs(y - r) / m.fmt.ulp_of(r)
    turned = (step < 0) & ((rise > 0) | ((rise == 0) & (np.maximum(off[1:], off[:-1]) > 1)))
    if not turned.any():
        return None
    # a turn back of more than one ulp: neighbours each misrounded by an ulp wobble by one
    k = np.flatnonzero(turned)
    unit = m.fmt.ulp_of(np.maximum(np.abs(y[k + 1]), np.abs(y[k])))
    where = np.zeros(len(m.x), dtype=bool)
    where[order[k + 1][step[k] < -unit]] = True
    return m.evidence(where, "not-monotone", advice("not-monotone"))


def wrong_sign(m: Measured) -> Signature | None:
    if m.function.family not in (DERIVATIVE, PDF):
        return None
    where = (m.y != 0) & (m.exact != 0) & np.isfinite(m.y) & (np.sign(m.y) != np.sign(m.exact))
    return m.evidence(where, "wrong-sign", advice("wrong-sign"))


def false_zero(m: Measured) -> Signature | None:
    if m.function.family not in (DERIVATIVE, PDF):
        return None
    where = (m.y == 0) & (m.rounded != 0)
    return m.evidence(where, "false-zero", advice("false-zero"))


DETECTORS = (flush_to_zero, overflow, nan_at_infinity, nan, tail_cancellation, absolute_error,
             low_precision, biased, out_of_range, not_monotone, wrong_sign, false_zero)
NAMES = ("flush-to-zero", "overflow", "nan-at-infinity", "nan", "tail-cancellation",
         "absolute-error", "low-precision", "biased", "wrong-form", "out-of-range",
         "not-monotone", "wrong-sign", "false-zero", "path-dependent")


def _specials(specials) -> list[Signature]:
    """nan-at-infinity and overflow at the special inputs (checks.specials), which the stored
    samples do not hold."""
    if not isinstance(specials, dict):
        return []
    out = []
    for name, at_infinity in (("nan-at-infinity", True), ("overflow", False)):
        # NaN at an infinite input; inf where the value is finite
        hit = [o.input for o in specials.values() if not o.ok and (
            (math.isnan(o.computed) and math.isinf(o.input)) if at_infinity
            else (math.isinf(o.computed) and math.isfinite(o.expected)))]
        if hit:
            first = min(hit, key=abs)
            out.append(Signature(name, len(hit), first, first, region_of(first),
                                 advice(name), detail="special inputs"))
    return out


def diagnose(function: Function, fmt: Format, x, y, rounded, exact, errors,
             fingerprint=None, specials=None, order=None) -> list[Signature]:
    """Every signature the measurement shows (none for a correctly rounded implementation);
    ``specials``: the special inputs' outcomes, for the signatures at ±inf and ±max."""
    as64 = lambda a: np.asarray(a).astype(np.float64)
    with np.errstate(all="ignore"):
        m = Measured(function, fmt, as64(x), as64(y), as64(rounded), as64(exact),
                     np.asarray(errors, dtype=np.float64), order)
        found = [s for s in (d(m) for d in DETECTORS) if s is not None]
    names = {s.name for s in found}
    found += [s for s in _specials(specials) if s.name not in names]
    if fingerprint is not None and fingerprint.mismatch:
        found.append(Signature("wrong-form", fingerprint.n_inputs, None, None, "all",
                               advice("wrong-form", formula=fingerprint.formula,
                                      declared=fingerprint.declared),
                               detail=f"computes {fingerprint.formula}"))
    return found


def of_result(case, result) -> list[Signature]:
    """diagnose over an accuracy result and the case it was measured on (checks.case)."""
    return diagnose(case.function, case.fmt, case.x, case.outputs, case.rounded,
                    case.exact_values, case.errors, result.fingerprint, result.specials,
                    _order(case.fmt, case.function))


@cache
def _order(fmt: Format, function: Function) -> np.ndarray:
    """The stored inputs' ascending order (one sort per format and function, not per
    result)."""
    from .checks import reference_data

    return np.argsort(reference_data.table(fmt, function).x.astype(np.float64), kind="stable")


def text(found: list[Signature]) -> str:
    """The signatures as lines to append to a failure message ("" where none)."""
    return "".join(f"\n  signature {s.line()}" for s in found)


def diagnose_paths(result) -> list[Signature]:
    """path-dependent, from a consistency result: outputs that differ by call path."""
    paths = [p for p in result.paths if p.n_differ]
    if not paths:
        return []
    count = sum(p.n_differ for p in paths)
    names = ", ".join(p.name for p in paths[:4]) + (" ..." if len(paths) > 4 else "")
    return [Signature("path-dependent", int(count), None, None, "all",
                      advice("path-dependent", paths=names), detail=f"{len(paths)} paths")]


# Signatures of a whole call path, found by the consistency check, not by one measurement
PATH_SIGNATURES = ("path-dependent",)
ANY = "*"  # a recorded defect that explains every signature (quick_gelu is not GELU at all)


def cross_check(results: list, budgets) -> tuple[list[str], list[str]]:
    """The budgets' hand-written defects against the signatures found: (each recorded defect
    whose signatures none of its implementation's results for the function shows - a defect is
    recorded per dtype, and shows where the dtype lets it -, each signature of a result that
    no recorded defect of its own entry names: the entry of that dtype is what the report
    prints as the result's cause). A defect with ``signatures = []`` says why in
    ``no_signature``; one whose signatures are a call path's is the consistency check's."""
    from .results import AccuracyResult

    groups: dict[tuple[str, str], tuple[set, set]] = {}
    unexplained: list[str] = []
    for r in results:
        if not isinstance(r, AccuracyResult) or r.diagnosis is None:
            continue
        entry = budgets.get(r)
        if entry is None:
            continue
        recorded, found = groups.setdefault((r.identity.id, r.identity.function), (set(), set()))
        recorded.update(entry.get("defects", []))
        found.update(s.name for s in r.diagnosis)
        unexplained.extend(
            f"{r.label}: {sig} found, no recorded defect of its entry names it (recorded: "
            f"{', '.join(sorted(entry.get('defects', []))) or 'none'})"
            for sig in sorted(unexplained_by(r, entry, budgets.defects)))
    unmatched = []
    for (impl, function), (recorded, found) in sorted(groups.items()):
        for name in sorted(recorded):
            defect = budgets.defects[name]
            if "signatures" not in defect:
                unmatched.append(f"{name}: names no signatures (nor no_signature's reason)")
                continue
            expected = set(defect["signatures"])
            if not expected:
                if not defect.get("no_signature"):
                    unmatched.append(f"{name}: signatures = [] without a no_signature reason")
                continue
            if ANY in expected or expected <= set(PATH_SIGNATURES) or defect.get(
                    "signature_optional"):  # (explains these where they show; need not show)
                continue
            if not expected & found:
                unmatched.append(f"{impl} {function}: recorded {name} (expects "
                                 f"{', '.join(sorted(expected))}), found "
                                 f"{', '.join(sorted(found)) or 'none'}")
    return unmatched, unexplained


def unexplained_by(result, entry: dict, defects: dict) -> list[str]:
    """The signatures of ``result`` that no defect of its budget ``entry`` names (a call
    path's are the consistency check's; a defect of signature "*" names every one)."""
    explained = set()
    for name in entry.get("defects", []):
        explained |= set(defects.get(name, {}).get("signatures", []))
    if ANY in explained:
        return []
    return [sig.name for sig in result.diagnosis or ()
            if sig.name not in explained and sig.name not in PATH_SIGNATURES]


PROPOSED = "proposed-"  # the prefix of a defect written from a signature, for a person to reword


def propose(result, entry: dict, defects: dict) -> list[str]:
    """The signatures of ``result`` that no defect of its budget ``entry`` names, as defects
    to record: each ``proposed-<signature>`` is added to ``defects`` (once, with the
    signature's sentence and the first evidence as its reason, marked for review) and to the
    entry's list. Returns the names added to the entry."""
    added = []
    missing = unexplained_by(result, entry, defects)
    for sig in result.diagnosis or ():
        if sig.name not in missing:
            continue
        name = PROPOSED + sig.name
        defects.setdefault(name, {
            "signatures": [sig.name],
            "reason": f"PROPOSED from the {sig.name} signature - review, reword and rename: "
                      f"{sig.advice}. First seen in {result.label}: {sig.line()}"})
        entry["defects"] = sorted({*entry.get("defects", []), name})
        added.append(name)
    return added

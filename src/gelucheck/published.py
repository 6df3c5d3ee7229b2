"""Documented accuracy bounds (``data/published_bounds.toml``): what a library promises, to be
shown next to what gelucheck measures (report.tables, report.jsonio), and where a measurement
exceeds a promise."""
from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import NamedTuple

import numpy as np
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from .errors import GelucheckError
from .formats import FORMATS
from .functions import FUNCTIONS
from .results import AccuracyResult, SearchResult, SweepResult

Measured = AccuracyResult | SweepResult | SearchResult

FILE = "published_bounds.toml"
# How a document counts its ulps (docs/design.md, Checks): from the exact value, as
# gelucheck does, or from the correctly rounded result (glibc's libm-test-ulps, CUDA's guide),
# where a result 4.49 ulps from the exact value is 4 from the correctly rounded one
METRICS = {"exact": "", "correctly-rounded": " from the correctly rounded result"}
# ulps: above a measured figure's own error (float64 rounding, the sweep's proven reference)
TOLERANCE = 1e-6


class Counted(NamedTuple):
    """A largest error counted as a document counts it."""

    at_worst: float  # at the worst input: that count, or a lower bound of it (not settled)
    settled: bool  # whether at_worst is the count there, not only a lower bound
    at_most: float  # the most any input it was measured over can count


@dataclass(frozen=True)
class Bound:
    function: str
    dtype: str
    max_ulp: float
    library: str
    source: str
    metric: str  # a key of METRICS
    backend: str | None = None
    implementations: tuple[str, ...] = ()
    note: str = ""
    # "LIBRARY SPECIFIERS" (glibc >=2.33,<2.41): the releases the document speaks of, read off
    # the backend's version line; a result whose line names no such release is not covered
    versions: str = ""
    machine: str = ""  # the architecture the document speaks of, "(x86_64)" in the version line

    def covers(self, result: Measured) -> bool:
        i = result.identity
        return (self.backend == i.backend and i.implementation in self.implementations
                and self.function == i.function and self.dtype == i.dtype
                and self.holds_for(i.backend_version or ""))

    def holds_for(self, version_line: str) -> bool:
        """Whether the backend's version line names a release (and machine) this bound is
        documented for; a bound with neither holds for every release."""
        if self.machine and f"({self.machine})" not in version_line:
            return False
        if not self.versions:
            return True
        name, specifiers = library_and_specifiers(self.versions)
        found = re.search(rf"\b{re.escape(name)} v?(\d+(?:\.\d+)*)", version_line)
        return found is not None and Version(found[1]) in specifiers

    def counted(self, result: Measured) -> Counted:
        """A measured result's largest error counted as this bound's document counts it.
        From the exact value, that is gelucheck's max ulp."""
        f = result.figures
        assert f is not None  # (only a measured result is compared)
        if self.metric == "exact" or not math.isfinite(f.max_ulp):
            return Counted(f.max_ulp, True, f.max_ulp)
        return from_rounded(f.max_ulp, f.computed, f.exact, self.dtype)

    def exceeded_by(self, result: Measured) -> bool:
        """Whether a result it covers is, at its worst input, above this bound (as the
        document counts)."""
        return self.counted(result).at_worst > self.max_ulp


def from_rounded(error: float, computed: float, exact: float, dtype: str) -> Counted:
    """|computed - r| / ulp(r), r the correctly rounded result, from the error against the
    exact value v (gelucheck's: in ulps of v's binade), at the worst input and at most over
    every input of that error or less. Within one binade it is the integer within 1/2 of
    the error; where a result and r straddle a power of two it is a multiple of 1/2, at most
    the error + 1/2 and at least half of the error - 1/2 (docs/design.md, Checks)."""
    lowest = math.ldexp(1.0, FORMATS[dtype].emin)  # below it, one binade of one ulp

    def binade(value: float) -> int | None:
        return None if abs(value) < lowest else math.frexp(value)[1]

    edge = math.ldexp(1.0, math.frexp(exact)[1])  # the power of two above |v|
    rounds_out = abs(exact) + float(FORMATS[dtype].ulp_of(np.float64(abs(exact)))) >= edge
    same = binade(computed) == binade(exact) and not rounds_out
    at_least = max(0, math.ceil(error - 0.5 - TOLERANCE))
    settled = same and at_least == math.floor(error + 0.5 + TOLERANCE)  # (not at a tie)
    return Counted(at_least if same else at_least / 2, settled,
                   math.floor(2 * error + 1 + 2 * TOLERANCE) / 2)


@cache
def bounds() -> tuple[Bound, ...]:
    """Every documented bound of the shipped file."""
    path = resources.files("gelucheck") / "data" / FILE
    return parse(path.read_text(), str(path))


def parse(text: str, where: str) -> tuple[Bound, ...]:
    """The bounds a file's text holds; a malformed entry is refused, the file named."""
    try:
        rows = tomllib.loads(text)["bound"]
        out = tuple(Bound(**{"metric": None, **row,
                             "implementations": tuple(row.get("implementations", ()))})
                    for row in rows)
    except (KeyError, TypeError, tomllib.TOMLDecodeError) as exc:
        raise GelucheckError(f"{where}: not a list of [[bound]] entries ({exc})") from None
    for b in out:
        if b.metric not in METRICS:
            raise GelucheckError(f"{where}: a bound's metric (how its document counts ulps) "
                                 f"must be one of {', '.join(METRICS)}: {b}")
        if b.function not in FUNCTIONS or b.dtype not in FORMATS or not b.max_ulp > 0:
            raise GelucheckError(f"{where}: a bound names an unknown function or dtype, or a "
                                 f"max_ulp that is not positive: {b}")
        try:
            if b.versions:
                library_and_specifiers(b.versions)
        except ValueError:
            raise GelucheckError(f"{where}: versions must read 'LIBRARY SPECIFIERS', as in "
                                 f"'glibc >=2.33,<2.41': {b.versions!r} in {b}") from None
    return out


def library_and_specifiers(versions: str) -> tuple[str, SpecifierSet]:
    """'glibc >=2.33,<2.41' -> ('glibc', its specifiers); ValueError where it is not that."""
    name, _, specifiers = versions.strip().partition(" ")
    if not specifiers.strip():
        raise ValueError(f"no specifiers after the library's name: {versions!r}")
    return name, SpecifierSet(specifiers)  # InvalidSpecifier is a ValueError


def bound_for(result: Measured) -> Bound | None:
    """The documented bound that covers a measured result (an AccuracyResult or a
    SweepResult): its implementation, function and dtype, and the release its backend's
    version line names. None for a result that was not measured: nothing to set beside it."""
    if result.figures is None:
        return None
    return next((b for b in bounds() if b.covers(result)), None)


FULL_SWEEP = ["0x00000000", "0x100000000"]


def coverage(result: Measured) -> str:
    """Which inputs a result's max ulp is the maximum over: "every input" (a 16-bit dtype's
    reference data holds all of them; a sweep of all float32), "range" (a sweep of part of
    float32), "sample" (float32 and float64 in ``check``: a stratified sample) or "search"
    (``gelucheck search``). Only over every input may a measured figure be said to be within
    a documented bound: a sample's or a search's maximum is a lower bound of the true one."""
    if isinstance(result, SearchResult):
        return "search"
    if isinstance(result, SweepResult):
        return "every input" if result.range == FULL_SWEEP else "range"
    return "every input" if FORMATS[result.identity.dtype].bits == 16 else "sample"


def verdict(bound: Bound, result: Measured) -> str:
    """'ABOVE at x = ...' with the worst input (a finding of its own); 'within' over every
    input; else 'none above on the sample' (or 'in the range'): never 'within' on part. Where
    the document counts from the correctly rounded result and every input was measured, but
    a result straddling a power of two could count more than the worst input:
    'not above at the worst input'."""
    assert result.figures is not None  # (only a measured result is compared)
    at_worst, _, at_most = bound.counted(result)
    if at_worst > bound.max_ulp:
        return f"ABOVE at x = {result.figures.worst_input!r}"
    covered = coverage(result)
    if covered == "every input":
        return "within" if at_most <= bound.max_ulp else "not above at the worst input"
    return "none above " + {"range": "in the range", "search": "in the search"}.get(
        covered, "on the sample")


def measured(bound: Bound, result: Measured, brief: bool = False) -> str:
    """The measured figure as the document counts it, with gelucheck's beside it where they
    differ: '4 at the worst input (4.487 from the exact value, every input)'; brief, for a
    table: '4 (4.487 from exact, every input)'."""
    assert result.figures is not None
    at_worst, settled, _ = bound.counted(result)
    if bound.metric == "exact":
        return f"{at_worst:.4g} ({coverage(result)})"
    if brief:
        return (f"{'' if settled else '>= '}{at_worst:g} ({result.figures.max_ulp:.4g} from "
                f"exact, {coverage(result)})")
    return (f"{'' if settled else 'at least '}{at_worst:g} at the worst input "
            f"({result.figures.max_ulp:.4g} from the exact value, {coverage(result)})")


def beside(result: Measured) -> str | None:
    """One line for a measured result a bound covers: documented, measured, verdict, whose."""
    bound = bound_for(result)
    if bound is None or result.figures is None:
        return None
    return (f"documented {bound.max_ulp:g} ulp{METRICS[bound.metric]}, measured "
            f"{measured(bound, result)}: {verdict(bound, result)} ({bound.library})")


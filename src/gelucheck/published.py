"""Documented accuracy bounds (``data/published_bounds.toml``): what a library promises, to be
shown next to what gelucheck measures (report.tables, report.jsonio), and where a measurement
exceeds a promise."""
from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from .errors import GelucheckError
from .formats import FORMATS
from .functions import FUNCTIONS
from .results import AccuracyResult, SearchResult, SweepResult

Measured = AccuracyResult | SweepResult | SearchResult

FILE = "published_bounds.toml"


@dataclass(frozen=True)
class Bound:
    function: str
    dtype: str
    max_ulp: float
    library: str
    source: str
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

    def exceeded_by(self, result: Measured) -> bool:
        """Whether the measured max ulp of a result it covers is above this bound."""
        assert result.figures is not None  # (only a measured result is compared)
        return result.figures.max_ulp > self.max_ulp


@cache
def bounds() -> tuple[Bound, ...]:
    """Every documented bound of the shipped file."""
    path = resources.files("gelucheck") / "data" / FILE
    return parse(path.read_text(), str(path))


def parse(text: str, where: str) -> tuple[Bound, ...]:
    """The bounds a file's text holds; a malformed entry is refused, the file named."""
    try:
        rows = tomllib.loads(text)["bound"]
        out = tuple(Bound(**{**row, "implementations": tuple(row.get("implementations", ()))})
                    for row in rows)
    except (KeyError, TypeError, tomllib.TOMLDecodeError) as exc:
        raise GelucheckError(f"{where}: not a list of [[bound]] entries ({exc})") from None
    for b in out:
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
    input; else 'none above on the sample' (or 'in the range'): never 'within' on part."""
    if bound.exceeded_by(result):
        assert result.figures is not None  # (exceeded_by: a measured result)
        return f"ABOVE at x = {result.figures.worst_input!r}"
    covered = coverage(result)
    if covered == "every input":
        return "within"
    return "none above " + {"range": "in the range", "search": "in the search"}.get(
        covered, "on the sample")


def beside(result: Measured) -> str | None:
    """One line for a measured result a bound covers: documented, measured, verdict, whose."""
    bound = bound_for(result)
    if bound is None or result.figures is None:
        return None
    return (f"documented {bound.max_ulp:g} ulp, measured {result.figures.max_ulp:.4g} "
            f"({coverage(result)}): {verdict(bound, result)} ({bound.library})")


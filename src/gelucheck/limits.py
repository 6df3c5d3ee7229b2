"""``gelucheck check --max-ulp``: a limit on the ulp error, overall or per region, that a CI
job can fail on. A limit of 0.5 means "correctly rounded" and is judged by the rounded
values themselves, so a result a hair from a tie that scores exactly 0.5 still fails it."""
from __future__ import annotations

from dataclasses import dataclass

from .checks.regions import REGION_NAMES
from .errors import UsageError, choose
from .functions import get_function
from .report.cells import fmt_ulp
from .results import AccuracyResult
from .ulp import is_ulp_limit

OVERALL = "all"


@dataclass(frozen=True)
class Limit:
    region: str  # a region name, or OVERALL
    max_ulp: float

    def __str__(self) -> str:  # as the command line gives it
        return f"{self.max_ulp:g}" if self.region == OVERALL else f"{self.region}={self.max_ulp:g}"


def parse_limit(text: str) -> Limit:
    """"N" (every input) or "REGION=N", e.g. "x<-5=1e3"."""
    region, sep, number = text.rpartition("=")
    region = region if sep else OVERALL
    try:
        value = float(number)
    except ValueError:
        value = float("nan")
    if not is_ulp_limit(value):
        raise UsageError(f"--max-ulp {text!r}: expected N or REGION=N with N >= 0, e.g. 0.5 or "
                         "'x<-5=1e3'")
    if region != OVERALL:
        choose("region", region, REGION_NAMES)
    return Limit(region, value)


def refuse_region_twice(limits: list[Limit]) -> None:
    """One limit a region: of two, one would be dropped silently or hide the other."""
    given: dict[str, Limit] = {}
    for limit in limits:
        if (before := given.setdefault(limit.region, limit)) is not limit:
            where = "every input" if limit.region == OVERALL else f"region {limit.region}"
            raise UsageError(f"--max-ulp gives {where} two limits ({before} and {limit}): "
                             "give one")


def breaches(result: AccuracyResult, limits: list[Limit], specials: bool) -> list[str]:
    """What in one result breaks the limits, each with its worst case; [] when it holds."""
    out = []
    f = result.figures
    for limit in limits:
        if f is None:  # nothing measured (a failure, a specials-only result): no figure
            break
        figures = f if limit.region == OVERALL else f.region(limit.region)
        if figures is None:
            continue
        wrong = figures.not_correctly_rounded if limit.max_ulp <= 0.5 else 0
        where = "" if limit.region == OVERALL else f" in {limit.region}"
        if figures.max_ulp > limit.max_ulp:
            count = f" ({wrong} not correctly rounded)" if wrong else ""
            out.append(f"max ulp{where} {fmt_ulp(figures.max_ulp)} > {limit.max_ulp:g}{count}; "
                       f"worst x = {figures.worst_input!r} ({figures.worst_input_hex})"
                       + (f": computed {f.computed!r}, exact {f.exact!r}"
                          if limit.region == OVERALL else ""))
        elif wrong:  # within half an ulp, and still not correctly rounded
            out.append(f"{wrong} results{where} not correctly rounded (a tie rounded the wrong "
                       "way, or a hair past one: each scores 0.5 ulp)")
    if f is not None and f.impossible:
        out.append(impossible_text(result))
    if specials and isinstance(result.specials, dict):
        for label in result.failing_specials:
            s = result.specials[label]
            out.append(f"special input {label}: expected {s.expected!r}, computed "
                       f"{s.computed!r}")
    return out


def impossible_text(result: AccuracyResult) -> str:
    """The results no value of the function can have, with the first one."""
    f = result.figures
    assert f is not None
    function = get_function(result.reference)
    what = (f"outside [{function.bounds[0]:g}, {function.bounds[1]:g}]" if function.bounds
            else "")
    if function.sign_of_x:
        what = f"{what} or " if what else ""
        what += "of the wrong sign"
    return (f"{f.impossible} results {what} (an error at any ulp count), first at "
            f"x = {f.impossible_at!r} ({f.impossible_at_hex}): computed {f.impossible_computed!r}")

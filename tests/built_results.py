"""Results built by hand, for the tests of what reads them (budgets, the judge, reports,
documented bounds, diagnoses): one builder of each kind, every figure a keyword with a
plain default, so that a test states only the figures it is about."""
import math

from gelucheck.results import (
    AccuracyResult,
    ErrorFigures,
    Identity,
    Region,
    SearchFigures,
    SearchResult,
    SweepResult,
)

WORST = (-6.0, "0xc0c00000")  # the default worst input: x = -6, in the region x<-5


def figures(max_ulp: float = 10.0, regions: dict[str, float] | list[Region] | None = None, *,
            n_inputs: int = 100, mean_ulp: float = 0.1, not_correctly_rounded: int = 0,
            worst: tuple[float, str] = WORST, computed: float = 0.0, exact: float = 0.0,
            max_abs_error: float = 0.0, impossible: int | None = 0) -> ErrorFigures:
    """ErrorFigures; ``regions`` as Region objects, or {name: max ulp} (each one input below
    0 at the worst input, of mean_ulp), or None for {"x<-5": max_ulp}."""
    if regions is None:
        regions = {"x<-5": max_ulp}
    if isinstance(regions, dict):
        regions = [Region(name, -math.inf, 0.0, 1, ulp, mean_ulp, *worst)
                   for name, ulp in regions.items()]
    return ErrorFigures(n_inputs=n_inputs, max_ulp=max_ulp, mean_ulp=mean_ulp, n_infinite=0,
                        not_correctly_rounded=not_correctly_rounded, worst_input=worst[0],
                        worst_input_hex=worst[1], computed=computed, exact=exact,
                        max_abs_error=max_abs_error, max_abs_at=worst[0], regions=regions,
                        impossible=impossible)


def identity(backend: str = "be", impl: str = "impl", function: str = "gelu",
             dtype: str = "float32", **provenance) -> Identity:
    return Identity(backend, impl, function, dtype, **provenance)


def accuracy(measured: ErrorFigures | None = None, *, of: Identity | None = None,
             how: str = "native", **parts) -> AccuracyResult:
    """An AccuracyResult of ``of`` (identity()'s default where None) with these figures (or
    ``figures=`` among the parts) and parts (failure, specials, minimum, diagnosis ...)."""
    of = of or identity()
    parts.setdefault("figures", measured)
    return AccuracyResult(of, of.function, how, "", **parts)


def sweep(measured: ErrorFigures | None = None, *, of: Identity | None = None,
          span: tuple[str, str] | list[str] = ("0x00000000", "0x100000000"),
          **parts) -> SweepResult:
    """A SweepResult over ``span`` (all float32 by default)."""
    of = of or identity()
    parts.setdefault("figures", measured)
    return SweepResult(of, of.function, "native", list(span), 0, **parts)


def search(max_ulp: float, *, of: Identity | None = None) -> SearchResult:
    """A SearchResult of glibc 2.36's double erf (or ``of``) that found ``max_ulp`` at x =
    -0.0550785..., settled."""
    of = of or identity("libm", "erf", "erf", "float64", backend_version="glibc 2.36 (x86_64)")
    x = -0.055078512738165414
    return SearchResult(of, 44_746_877, 0, figures=SearchFigures(
        max_ulp, x, x.hex(), -0.062086657081184965, -0.06208665708118497, 8, 1e-6))

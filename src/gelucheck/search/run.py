"""One implementation's float64 search, start to end: the engine up, the rounds run (with
a progress bar over the evaluations, and a checkpoint where asked), the candidates settled
by mpmath, the signatures around the worst (search/diagnose.py), and a SearchResult."""
from __future__ import annotations

import math
import time
from collections.abc import Callable

from ..backends import Implementation
from ..backends.registry import identity
from ..errors import ImplementationError
from ..formats import FLOAT64
from ..progress import bar
from ..results import Failure, SearchFigures, SearchResult
from ..sweep.reference import SweepError
from ..sweep.worker import Spec
from . import checkpoint as checkpoints
from . import landmarks
from .diagnose import diagnose
from .engine import engine
from .settle import settle
from .strategy import Budget, Outcome, search
from .task import Candidate


def run(spec: Spec, impl: Implementation, budget: Budget, seed: int, workers: int = 1,
        engine_name: str = "local", scheduler: str | None = None, progress: bool = True,
        checkpoint: str | None = None, say: Callable[[str], None] = print) -> SearchResult:
    """The search of ``impl``, which the workers rebuild from ``spec``."""
    function = impl.function
    who = identity(impl, FLOAT64)
    clock = time.perf_counter()
    # the bar follows the evaluations, or the seconds where only those are given
    by_time = budget.evaluations is None
    total = int(budget.seconds or 0) if by_time else budget.evaluations or 0
    meter = bar(total, f"searching {impl.id} {function.name}", progress,
                unit="s" if by_time else "input")
    try:
        with engine(spec, impl, workers, engine_name, scheduler) as e:
            if e.dashboard:
                say(f"Dask dashboard {e.dashboard}")
            runner = checkpoints.wrap(e, checkpoint, spec, impl, seed)

            def advanced(outcome: Outcome) -> None:
                done = time.perf_counter() - budget.started if by_time else outcome.evaluations
                meter.update(max(0, min(int(done), total) - meter.n))
                meter.set_postfix_str(f"worst {outcome.worst:.4g} ulp", refresh=False)

            outcome = search(runner, budget, seed, advanced, landmarks.cells(function),
                             landmarks.middle())
            described = e.describe()
    except (ImplementationError, SweepError) as exc:
        return SearchResult(who, 0, seed, Failure(str(exc)))
    finally:
        meter.close()
    settled = settle(function, _to_settle(outcome.candidates))
    worst = settled[0]
    # (an infinite error, a NaN or inf output, has no gap to measure: None, not NaN)
    gaps = [abs(s.error - s.candidate.error) for s in settled
            if math.isfinite(s.error) and math.isfinite(s.candidate.error)]
    figures = SearchFigures(
        worst.error, worst.candidate.x, worst.candidate.x.hex(), worst.candidate.y,
        worst.exact, len(settled), max(gaps) if gaps else None)
    diagnosis = diagnose(impl, worst.candidate.x)
    return SearchResult(
        who, outcome.evaluations, seed, None, figures,
        [{"x": s.candidate.x.hex(), "computed": s.candidate.y.hex(), "ulp": s.error}
         for s in settled], outcome.rounds, outcome.whole_cells,
        time.perf_counter() - clock, outcome.implementation_s, outcome.reference_s,
        described, diagnosis)


def _to_settle(candidates: list[Candidate]) -> list[Candidate]:
    """The candidates mpmath settles: the best few, and every one the fast reference cannot
    tell from the best (its figure within their two doubts)."""
    if not candidates:
        return []
    best = candidates[0]
    return [c for i, c in enumerate(candidates)
            if i < 8 or c.error + c.doubt >= best.error - best.doubt]

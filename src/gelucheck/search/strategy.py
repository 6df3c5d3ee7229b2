"""Where the float64 search looks (docs/commands/search.md says why): every binade of both
signs sampled first, and the cells around landmarks (landmarks.py) searched whole; then
descents, each a beam - the BEAM cells with the largest errors split into 16 and sampled
again, the BEAM best of their children kept - down to cells of 2^20 encodings searched
whole, with the neighbours of the whole cell that holds the worst input so far. Most
descents start from cells of 2^-12 of a binade (anchors): the best by their samples, or,
every other descent, the few whose whole cells have scored best - where the errors are
rounding noise under a smooth envelope, the largest error comes from where its tail is
heaviest, which a whole cell's 2^20 inputs measure and 64 samples do not.

The published method (Gladman, Innocente, Mather, Zimmermann) splits ranges, keeps about 20
of the most promising and refines them, chained from the previous worst input; this does
the same over the encodings, in rounds fixed by the seed and the budget alone, so that any
number of workers gives the same result. Each descent draws new samples (its seed is the
search's and its number), so the beams differ where the errors are noise.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from .cells import Cell, binades
from .task import Candidate, CellResult

BASE_SAMPLES = 32  # per binade, besides its two ends
MIDDLE_SAMPLES = 1024  # per binade where the functions change (|x| from 2^-10 to 2^7)
SPLIT_BITS = 4  # a refined cell's 16 children
CHILD_SAMPLES = 64
WHOLE_BITS = 20  # a cell of at most 2^20 encodings is searched whole
BEAM = 20  # cells kept per level of a descent
# A descent from the binades costs most in its first levels, where the samples are too sparse
# for expansions (Arb, point by point); one in REFRESH does so, and the others start from the
# best cells ever sampled at ANCHOR_LEVEL (2^-12 of a binade), with new samples below.
REFRESH = 8
ANCHOR_LEVEL = 12
# Every other descent exploits: it starts from the EXPLOIT anchors whose whole cells have the
# highest mean score (each whole cell's score is the mean of its largest errors, over the
# same 2^WHOLE_BITS inputs, so the anchors compare fairly; an anchor with a lucky first cell
# gets more and falls back if it was luck).
EXPLOIT = 4
KEPT = 32  # candidates kept for settling

# runs a round: its cells of one sample size and its seed, returning their results in order
Runner = Callable[[list[Cell], int | None, int], list[CellResult]]


OnRound = Callable[["Outcome"], None] | None  # told after each round


@dataclass
class Budget:
    evaluations: int | None = None
    seconds: float | None = None
    started: float = field(default_factory=time.perf_counter)

    def spent(self, evaluations: int) -> bool:
        if self.evaluations is not None and evaluations >= self.evaluations:
            return True
        return self.seconds is not None and time.perf_counter() - self.started >= self.seconds


@dataclass
class Outcome:
    evaluations: int = 0
    rounds: int = 0
    whole_cells: int = 0
    candidates: list[Candidate] = field(default_factory=list)  # largest error first
    implementation_s: float = 0.0
    reference_s: float = 0.0

    def add(self, results: list[CellResult]) -> None:
        """A round's results (merged at once: a merge per result costs more than the
        round's samples)."""
        merged = {c.x: c for c in self.candidates}
        for result in results:
            self.evaluations += result.evaluated
            self.implementation_s += result.implementation_s
            self.reference_s += result.reference_s
            merged.update((c.x, c) for c in result.worst)
        self.candidates = sorted(merged.values(), key=lambda c: (-c.error, c.x))[:KEPT]

    @property
    def worst(self) -> float:
        return self.candidates[0].error if self.candidates else 0.0


def search(run: Runner, budget: Budget, seed: int, on_round: OnRound = None,
           landmarks: Sequence[Cell] = (), middle: Sequence[Cell] = ()) -> Outcome:
    """``landmarks``: cells searched whole after the binades are sampled; ``middle``: the
    binades sampled MIDDLE_SAMPLES times, where the function changes (landmarks.py)."""
    outcome = Outcome()
    searched: set[Cell] = set()  # cells searched whole
    anchors: dict[Cell, CellResult] = {}  # every cell sampled at ANCHOR_LEVEL
    heat: dict[Cell, list[float]] = {}  # an anchor's whole cells' scores
    base = _round(run, binades(), BASE_SAMPLES, seed, outcome, on_round)
    if middle:
        denser = {r.cell: r for r in _round(run, list(middle), MIDDLE_SAMPLES, seed, outcome,
                                            on_round)}
        base = [denser.get(r.cell, r) for r in base]
    _search_whole(run, list(landmarks), searched, heat, seed, outcome, on_round)
    descent = 0
    while not budget.spent(outcome.evaluations):
        descent += 1
        if descent % REFRESH == 1 or not anchors:
            beam = [r.cell for r in _best(base)]
        elif descent % 2 == 0 and len(heat) >= EXPLOIT:
            beam = _hottest(heat)
        else:
            beam = [r.cell for r in _best(list(anchors.values()))]
        while (beam and beam[0].size > 1 << WHOLE_BITS
               and not budget.spent(outcome.evaluations)):
            children = [child for cell in beam for child in cell.children(SPLIT_BITS)]
            results = _round(run, children, CHILD_SAMPLES, seed + descent, outcome, on_round)
            anchors.update((r.cell, r) for r in results if r.cell.level == ANCHOR_LEVEL)
            beam = [r.cell for r in _best(results)]
        chain = beam
        while chain and not budget.spent(outcome.evaluations):
            chain = _search_whole(run, [c for c in chain if c not in searched], searched,
                                  heat, seed, outcome, on_round)
    return outcome


def _search_whole(run: Runner, cells: list[Cell], searched: set[Cell],
                  heat: dict[Cell, list[float]], seed: int, outcome: Outcome,
                  on_round: OnRound) -> list[Cell]:
    """Cells searched whole, each of 2^WHOLE_BITS inputs scored into its anchor's heat;
    returns the cells beside the one with the worst input so far, to be searched next (the
    chain), or none."""
    searched.update(cells)
    results = _round(run, cells, None, seed, outcome, on_round) if cells else []
    outcome.whole_cells += len(results)
    for r in results:
        if r.cell.size == 1 << WHOLE_BITS and r.cell.level >= ANCHOR_LEVEL:
            heat.setdefault(r.cell.ancestor(ANCHOR_LEVEL), []).append(r.score)
    return [n for r in results if r.worst and r.worst[0] == outcome.candidates[0]
            for n in r.cell.neighbours() if n not in searched]


def _hottest(heat: dict[Cell, list[float]]) -> list[Cell]:
    """The EXPLOIT anchors whose whole cells' mean score is highest (ties: the lower)."""
    return sorted(heat, key=lambda a: (-sum(heat[a]) / len(heat[a]), a))[:EXPLOIT]


def _round(run: Runner, cells: list[Cell], samples: int | None, seed: int, outcome: Outcome,
           on_round: OnRound) -> list[CellResult]:
    results = run(cells, samples, seed)
    outcome.add(results)
    outcome.rounds += 1
    if on_round is not None:
        on_round(outcome)
    return results


def _best(results: list[CellResult]) -> list[CellResult]:
    """The BEAM cells with the largest errors (ties: the lower cell first)."""
    return sorted(results, key=lambda r: (-r.score, r.cell))[:BEAM]

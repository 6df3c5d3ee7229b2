"""`gelucheck bench compare OLD NEW`: pytest-benchmark runs compared by each benchmark's time
relative to the copy baseline timed in the same run, against a noise band derived from the
spread measured in both runs.

Why not the medians themselves: on a shared machine an unchanged run moved a median by 22%
(docs/design.md, Benchmarks). Load that slows a whole run slows the copy beside it too, so
the ratio moves far less. The ratio is of the fastest rounds: noise only adds time, and a
median can land in either mode of a bimodal timing - a copy baseline whose median was 7.1 µs
in one run and 3.8 µs in the next (fastest 3.7 and 3.6) made an unchanged float32 group
"85% slower". What remains is judged against two measured spreads, whichever is
wider: within the runs, K times the relative IQRs of the benchmark and its baseline in both
runs combined in quadrature; between the runs, SPREAD_MADS times the spread of all the
benchmarks' changes (1.4826 x their median absolute deviation, in log space - a change shared
by every benchmark does not widen it, so a slowdown of everything is still flagged). Never
below FLOOR.

A verdict needs the benchmark's own fastest round to have left the band too, in the same
direction: a copy baseline can settle in another mode for a whole run (fastest 4.06 µs in one
unchanged CI run, 3.27 µs in the next, each with a 1% IQR) and move every ratio of its group
by itself; load moves the fastest rounds, not the ratios. What this misses: a regression
hidden by a machine that ran as much faster at the same time.

A benchmark itself can settle in a slower mode for a whole run too (torch's float16 F.gelu at
10^5: +36% in its own time and its ratio, in one unchanged CI run, against a band of ±35%
from its IQRs), which no measure within two runs tells from a regression. Given several
later runs (``confirm``), a verdict must hold against the earlier run in every one of them;
the row shown is the later run that changed least.
"""
from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass
from pathlib import Path

from ..errors import UsageError

FLOOR = 0.10  # no band narrower than ±10%: medians of a shared machine move that much
K = 2.0
SPREAD_MADS = 4.0  # timing noise is heavy-tailed: 3 MADs flagged 1 of 62 unchanged here
MIN_FOR_SPREAD = 8  # fewer benchmarks than this: no between-run spread, the floor is 0.25
SMALL_FLOOR = 0.25


@dataclass(frozen=True)
class Rounds:
    """What is used of one benchmark's rounds: the fastest, and the spread about the median."""
    fastest: float
    median: float
    iqr: float

    @classmethod
    def of(cls, stats: dict) -> Rounds:
        return cls(stats["min"], stats["median"], stats["iqr"])


@dataclass(frozen=True)
class Timing:
    own: Rounds
    baseline: Rounds  # the copy baseline of the same group and run

    @property
    def ratio(self) -> float:
        return self.own.fastest / self.baseline.fastest

    def spreads(self) -> list[float]:
        return [r.iqr / r.median for r in (self.own, self.baseline)]


@dataclass(frozen=True)
class Comparison:
    name: str
    old: Timing
    new: Timing
    change: float  # relative change of the ratio: +1.0 is twice as slow
    time_change: float  # relative change of the benchmark's own fastest round
    band: float
    verdict: str  # "slower", "faster" or "same"


def _baseline_name(name: str) -> str | None:
    """test_speed[IMPL-FUNCTION-DTYPE-SIZE] -> its group's copy baseline, by the same id."""
    if "[" not in name or "baseline:" in name:
        return None
    head, _, rest = name.partition("[")
    parts = rest.rstrip("]").split("-")
    if len(parts) < 4:
        return None
    return f"{head}[baseline:copy-{'-'.join(parts[-3:])}]"


def load(path: str | Path) -> dict[str, Timing]:
    """A pytest-benchmark JSON file (a folder: its newest one), as timings with the copy
    baseline of the same run; refused, naming the file, when it is not one."""
    path = Path(path)
    if path.is_dir():
        found = sorted(path.rglob("*.json"), key=lambda p: p.stat().st_mtime)
        if not found:
            raise UsageError(f"{path}: no saved benchmark run in it (save one with `tox -e "
                             "bench` or pytest --benchmark-autosave)")
        path = found[-1]
    try:
        runs = json.loads(path.read_text())["benchmarks"]
        stats = {b["name"]: b["stats"] for b in runs}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"{path}: not a pytest-benchmark JSON file ({exc})") from None
    out = {}
    for name, s in stats.items():
        base = stats.get(_baseline_name(name) or "")
        if base is None:
            continue
        try:
            out[name] = Timing(Rounds.of(s), Rounds.of(base))
        except (KeyError, TypeError) as exc:
            raise UsageError(f"{path}: not a pytest-benchmark JSON file ({exc})") from None
    return out


def run_spread(shifts: list[float]) -> float | None:
    """The spread of the benchmarks' log changes between two runs (robust: 1.4826 x MAD),
    or None with too few benchmarks to tell."""
    if len(shifts) < MIN_FOR_SPREAD:
        return None
    middle = statistics.median(shifts)
    return 1.4826 * statistics.median(abs(s - middle) for s in shifts)


def compare(old: dict[str, Timing], new: dict[str, Timing], floor: float = FLOOR,
            k: float = K) -> tuple[list[Comparison], list[str], list[str], float | None]:
    """Per benchmark in both runs: the change of its ratio and the verdict; the names only
    in the old and only in the new run; and the between-run spread used."""
    names = sorted(old.keys() & new.keys())
    # judged on the log scale, so that "twice as fast" and "twice as slow" are alike
    shifts = {n: math.log(new[n].ratio / old[n].ratio) for n in names}
    spread = run_spread(list(shifts.values()))
    between = math.expm1(SPREAD_MADS * spread) if spread is not None else max(floor,
                                                                              SMALL_FLOOR)
    rows = []
    for name in names:
        a, b = old[name], new[name]
        within = k * math.sqrt(sum(s * s for s in a.spreads() + b.spreads()))
        band = max(floor, within, between)
        edge = math.log1p(band)
        shift, time_shift = shifts[name], math.log(b.own.fastest / a.own.fastest)
        verdict = ("slower" if min(shift, time_shift) > edge else
                   "faster" if max(shift, time_shift) < -edge else "same")
        rows.append(Comparison(name, a, b, math.expm1(shift), math.expm1(time_shift), band,
                               verdict))
    return rows, sorted(old.keys() - new.keys()), sorted(new.keys() - old.keys()), spread


def confirm(per_run: list[list[Comparison]]) -> list[Comparison]:
    """One row per benchmark compared in every later run: "slower" or "faster" only where
    every run says so, shown as the run whose change is the smallest."""
    by_name = [{r.name: r for r in rows} for rows in per_run]
    out = []
    for name in sorted(set.intersection(*(set(rows) for rows in by_name))):
        rows = [runs[name] for runs in by_name]
        verdicts = {r.verdict for r in rows}
        shown = min(rows, key=lambda r: abs(math.log1p(r.change)))
        verdict = verdicts.pop() if len(verdicts) == 1 else "same"
        out.append(Comparison(shown.name, shown.old, shown.new, shown.change,
                              shown.time_change, shown.band, verdict))
    return out


def render(rows: list[Comparison]) -> tuple[list[str], list[list]]:
    header = ["benchmark", "old (x copy)", "new (x copy)", "change", "own time", "noise band",
              "verdict"]
    body = [[r.name, f"{r.old.ratio:.3g}", f"{r.new.ratio:.3g}", f"{r.change:+.1%}",
             f"{r.time_change:+.1%}", f"±{r.band:.1%}",
             r.verdict.upper() if r.verdict != "same" else "same"]
            for r in rows]
    return header, body

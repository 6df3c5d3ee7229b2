"""The verdict on a measurement against its budget (gelucheck.budgets holds the budgets
themselves): worse than recorded fails; clearly better is reported so that the budget can be
tightened, and fails where the budget records a known defect, since the record of the defect
is then out of date (the suite turns red the day accuracy regresses - or improves)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from .budgets import DEFAULT_MAX_ULP, PARTS, SEARCH_KEY, SWEEP_KEY, Budgets
from .results import (
    AccuracyResult,
    ConsistencyResult,
    MinimumFinding,
    SearchResult,
    SignFinding,
    SweepResult,
)

# "Clearly better": under half the budget and at least a quarter ulp below it.
BETTER_FACTOR = 0.5
BETTER_MARGIN = 0.25


@dataclass
class Verdict:
    worse: list[str] = field(default_factory=list)
    better: list[str] = field(default_factory=list)
    missing: bool = False
    defects: list[str] = field(default_factory=list)
    # where nothing was recorded for the result's kernel tier: what to say instead
    missing_tier: str | None = None
    # (recorded with, measured with) where the library's release is not the recorded one
    release_change: tuple[str, str] | None = None

    @property
    def failed(self) -> bool:
        fixed_defect = bool(self.better and self.defects) and self.release_change is None
        return self.missing or bool(self.worse) or fixed_defect

    def message(self) -> str:
        if self.missing:
            return self.missing_tier or (
                "no budget recorded: record one with `gelucheck budgets --write FILE` "
                "(gelucheck's own: src/gelucheck/data/budgets.toml)")
        lines = [f"worse than budget: {w}" for w in self.worse]
        if self.better and self.release_change:
            was, now = self.release_change
            lines += [f"{now} improves on the figure recorded with {was}: {b}"
                      for b in self.better]
        elif self.better and self.defects:
            lines += [f"better than budget, yet recorded as known defect(s) "
                      f"{', '.join(self.defects)} - fixed? update the budget: {b}"
                      for b in self.better]
        elif self.better:
            lines += [f"better than budget, can be tightened: {b}" for b in self.better]
        return "; ".join(lines)


def _compare_counts(what: str, measured: int, budget: int, verdict: Verdict) -> None:
    if measured > budget:
        verdict.worse.append(f"{what}: {measured} > {budget}")
    elif measured < budget:
        verdict.better.append(f"{what}: {measured} < {budget}")


def _compare_ulps(what: str, measured: float, budget: float, verdict: Verdict) -> None:
    if measured > budget and not (math.isinf(measured) and math.isinf(budget)):
        verdict.worse.append(f"{what} {measured:.4g} > {budget:.4g}")
    elif measured < budget * BETTER_FACTOR and budget - measured > BETTER_MARGIN:
        verdict.better.append(f"{what} {measured:.4g} < {budget:.4g}")


def judge(result: AccuracyResult, budgets: Budgets, entry: dict | None = None) -> Verdict:
    """A result vs its budget, on whichever of the figures, the minimum and the special
    inputs it holds. The defects that count are those that explain those parts (a defect's
    ``affects`` list; all parts when it has none)."""
    entry = entry if entry is not None else budgets.get(result)
    verdict = Verdict()
    if entry is None:
        return _missing(result, budgets, verdict)
    verdict.release_change = _release_change(result.identity, budgets)
    held = {"ulp": result.figures is not None, "minimum": result.minimum is not None,
            "specials": result.specials is not None, "sign": result.sign is not None,
            "fingerprint": result.fingerprint is not None}
    verdict.defects = [d for d in entry.get("defects", [])
                       if any(held.get(p, False) for p in budgets.defects[d].get("affects", PARTS))]
    if result.failure:
        verdict.worse.append(f"could not be measured: {result.failure.reason}")
    figures = result.figures
    if figures is not None:
        _compare_ulps("max ulp", figures.max_ulp, entry["max_ulp"], verdict)
        if entry["max_ulp"] <= 0.5:  # "correctly rounded" up to a recorded count of misses
            allowed, count = entry.get("not_correctly_rounded", 0), figures.not_correctly_rounded
            if count > allowed:
                verdict.worse.append(f"{count} results not correctly rounded, the budget "
                                     f"allows {allowed}")
            elif count < allowed:
                verdict.better.append(f"{count} results not correctly rounded, the budget "
                                      f"allows {allowed}")
        if figures.impossible is not None:
            _compare_counts("results outside the range or of the wrong sign",
                            figures.impossible, entry.get("impossible", 0), verdict)
        for region in figures.regions:
            if region.name in entry.get("regions", {}):
                _compare_ulps(f"max ulp in {region.name}", region.max_ulp,
                              entry["regions"][region.name], verdict)
    minimum = result.minimum
    if isinstance(minimum, MinimumFinding) and "minimum_value_ulp" in entry:
        _compare_ulps("ulp error of the minimum value", minimum.value_ulp_error,
                      entry["minimum_value_ulp"], verdict)
        was, now = entry["true_argmin_on_plateau"], minimum.true_argmin_on_plateau
        if was and not now:
            verdict.worse.append("x* no longer on the plateau of smallest outputs")
        elif now and not was:
            verdict.better.append("x* now on the plateau of smallest outputs")
    if isinstance(result.sign, SignFinding) and "wrong_sign" in entry:
        _compare_counts("results of the wrong sign or falsely zero",
                        result.sign.n_wrong_sign + result.sign.n_false_zero,
                        entry["wrong_sign"], verdict)
        if entry.get("x_star_in_crossing") and not result.sign.x_star_in_crossing:
            verdict.worse.append("the computed derivative no longer changes sign at x*")
    if result.fingerprint is not None and "fingerprint" in entry:
        _judge_fingerprint(result.fingerprint, entry["fingerprint"], budgets, entry, verdict)
    if isinstance(result.specials, dict) and "specials_failing" in entry:
        failing = set(result.failing_specials)
        recorded = set(entry["specials_failing"])
        if failing - recorded:
            verdict.worse.append(f"special inputs now wrong: {sorted(failing - recorded)}")
        if recorded - failing:
            verdict.better.append(f"special inputs now right: {sorted(recorded - failing)}")
    return verdict


def _release_change(identity, budgets: Budgets) -> tuple[str, str] | None:
    """(recorded with, measured with) where the two releases differ: a figure better than
    recorded is then an improvement of the library, not a stale record."""
    was, now = budgets.release(identity), identity.release
    if was and now and was != now:
        return f"{identity.backend} {was}", f"{identity.backend} {now}"
    return None


def missing_tier(identity, budgets: Budgets) -> tuple[str, str, str | None] | None:
    """Where ``identity``'s backend was recorded on other kernel tiers only: (what is
    missing, the commands that record it or cap at the nearest recorded tier, that tier)."""
    tier = budgets.missing_tier(identity)
    if tier is None:
        return None
    recorded = budgets.tiers(identity.backend) or {}
    nearest = budgets.nearest_tier(identity.backend, tier)
    what = (f"no budget for kernel tier {tier} of {identity.backend} (recorded: "
            f"{', '.join(recorded)})")
    how = (f"record this tier with `gelucheck budgets --write FILE --backend "
           f"{identity.backend} --kernel-tier native`, or judge on a recorded tier with "
           f"--gelucheck-kernel-tier {nearest} (pytest) or --kernel-tier {nearest}")
    return what, how, nearest


def _missing(result, budgets: Budgets, verdict: Verdict) -> Verdict:
    """No entry for ``result``; where its tier is the one missing, the verdict names it and
    judges the result against the nearest recorded tier beside it."""
    verdict.missing = True
    found = missing_tier(result.identity, budgets)
    if found is None:
        return verdict
    what, how, nearest = found
    entry = budgets.lookup(result.identity, nearest) if nearest else None
    if entry is not None and isinstance(result, AccuracyResult):
        beside = judge(result, budgets, entry)
        figures = (f"max ulp {result.figures.max_ulp:.4g} measured, {entry['max_ulp']:.4g} "
                   "recorded there; " if result.figures is not None else "")
        what += (f"; beside the nearest recorded tier, {nearest}: {figures}"
                 f"{beside.message() or 'within its budget'}")
    verdict.missing_tier = f"{what}; {how}"
    return verdict


def judge_consistency(result: ConsistencyResult, budgets: Budgets) -> Verdict:
    """Each path's count of outputs that differ from the bulk result, against the counts the
    budget records (``inconsistent``, path -> count; a path not listed: none may differ)."""
    entry = budgets.get(result)
    verdict = Verdict()
    if entry is None or "inconsistent" not in entry:
        return _missing(result, budgets, verdict)
    verdict.release_change = _release_change(result.identity, budgets)
    verdict.defects = [d for d in entry.get("defects", [])
                       if "consistency" in budgets.defects[d].get("affects", PARTS)]
    if result.failure:
        verdict.worse.append(f"could not be measured: {result.failure.reason}")
    recorded = entry["inconsistent"]
    for path in result.paths:
        if path.error:
            verdict.worse.append(f"path {path.name} failed: {path.error}")
            continue
        _compare_counts(f"outputs of path {path.name} that differ from the bulk result",
                        path.n_differ, recorded.get(path.name, 0), verdict)
    return verdict


def judge_sweep(result: SweepResult, budgets: Budgets) -> Verdict:
    """An exhaustive sweep against the sweep figures its budget records (``sweep`` in the
    float32 entry: max ulp overall and per region, the share correctly rounded) over the same
    range of encodings - a part is not comparable with the whole."""
    entry = budgets.get(result)
    verdict = Verdict()
    if entry is None or SWEEP_KEY not in entry or entry[SWEEP_KEY].get("range") != result.range:
        return _missing(result, budgets, verdict)
    verdict.release_change = _release_change(result.identity, budgets)
    verdict.defects = list(entry.get("defects", []))
    recorded = entry[SWEEP_KEY]
    if result.failure:
        verdict.worse.append(f"could not be measured: {result.failure.reason}")
        return verdict
    f = result.figures
    assert f is not None  # (a sweep that did not fail has figures)
    where = f" (worst x = {f.worst_input!r}, {f.worst_input_hex})"
    _compare_ulps("max ulp over all float32" + where, f.max_ulp, recorded["max_ulp"], verdict)
    for region in f.regions:
        if region.name in recorded.get("regions", {}):
            _compare_ulps(f"max ulp in {region.name} (worst x = {region.worst_input!r}, "
                          f"{region.worst_input_hex})", region.max_ulp,
                          recorded["regions"][region.name], verdict)
    share, floor = result.correctly_rounded_fraction, recorded["correctly_rounded"]
    if share < floor:
        verdict.worse.append(f"correctly rounded {share:.6%} < {floor:.6%}")
    elif share > floor + 1e-4:
        verdict.better.append(f"correctly rounded {share:.6%} > {floor:.6%}")
    return verdict


def sweep_line(result: SweepResult, budgets: Budgets) -> tuple[bool, str | None]:
    """(failed, the line that says so) for a sweep against its budget, as the CLI and the
    plugin print it: None where it is within budget and not clearly better."""
    return _gate_line(result, judge_sweep(result, budgets), budgets,
                      f"no sweep budget over [{result.range[0]}, {result.range[1]}); record "
                      "one with gelucheck sweep --write-budgets")


def judge_search(result: SearchResult, budgets: Budgets) -> Verdict:
    """A float64 search against what its budget records (``search`` in the float64 entry):
    comparable only with the same seed and evaluations - the same search, which gives the
    same result until the implementation changes."""
    entry = budgets.get(result)
    verdict = Verdict()
    recorded = (entry or {}).get(SEARCH_KEY)
    if (recorded is None or recorded.get("seed") != result.seed
            or recorded.get("evaluations") != result.evaluations):
        return _missing(result, budgets, verdict)
    assert entry is not None  # (it holds the search entry)
    verdict.release_change = _release_change(result.identity, budgets)
    verdict.defects = list(entry.get("defects", []))
    if result.failure:
        verdict.worse.append(f"could not be measured: {result.failure.reason}")
        return verdict
    f = result.figures
    assert f is not None  # (a search that did not fail has figures)
    _compare_ulps(f"max ulp found (x = {f.worst_input!r}, {f.worst_input_hex})", f.max_ulp,
                  recorded["max_ulp"], verdict)
    return verdict


def search_line(result: SearchResult, budgets: Budgets) -> tuple[bool, str | None]:
    """sweep_line for a search: gated only against the same search (seed, evaluations)."""
    return _gate_line(result, judge_search(result, budgets), budgets,
                      f"no search budget for seed {result.seed} and {result.evaluations:,} "
                      "evaluations; record one with gelucheck search --write-budgets")


def _gate_line(result, verdict: Verdict, budgets: Budgets,
               missing: str) -> tuple[bool, str | None]:
    if verdict.missing and budgets.get(result) is None and not verdict.missing_tier:
        return _held_to_default(result, budgets.default_max_ulp)
    if verdict.missing:  # a recorded implementation, but nothing comparable: said, not gated
        return False, f"{result.label}: {missing}"
    if verdict.failed or verdict.better:
        return verdict.failed, f"{result.label}: {verdict.message()}"
    return False, None


def _held_to_default(result, max_ulp: float) -> tuple[bool, str]:
    """A sweep or search of an implementation with no budget at all (a user's) held to the
    stated default, as judge_default holds a measurement, never passed unjudged: its max ulp
    at most ``max_ulp`` (a search's is a lower bound: above the default, it is over it)."""
    held = f"{result.label}: no budget recorded, so held to the default max ulp {max_ulp:g}"
    record = (f"; record its budget with gelucheck budgets --write FILE, then its "
              f"{'search' if isinstance(result, SearchResult) else 'sweep'} with "
              "--write-budgets FILE")
    if result.failure:
        return True, f"{held}: could not be measured: {result.failure.reason}"
    f = result.figures
    assert f is not None  # (a result that did not fail has figures)
    found = (f"{'at least ' if isinstance(result, SearchResult) else ''}{f.max_ulp:.4g} "
             f"(x = {f.worst_input!r}, {f.worst_input_hex})")
    if f.max_ulp > max_ulp:
        return True, f"{held}: {found} > {max_ulp:g}{record}"
    return False, f"{held}: {found}, within it{record}"


def _judge_fingerprint(found, recorded: str, budgets: Budgets, entry: dict,
                       verdict: Verdict) -> None:
    """The formula the outputs compute is recorded; a different one is a change either way,
    and one that is not the declared formula must be a recorded defect."""
    if found.formula != recorded:
        verdict.worse.append(f"fingerprint changed: it computed {recorded}, now {found.formula}")
    explained = any("fingerprint" in budgets.defects[d].get("affects", PARTS)
                    for d in entry.get("defects", []))
    if found.mismatch and not explained:
        verdict.worse.append(f"declared {found.declared}, its outputs compute {found.formula}")


def judge_default(result: AccuracyResult, max_ulp: float = DEFAULT_MAX_ULP) -> Verdict:
    """A result with no budget (a user's implementation, say), held to a stated default
    rather than passed unjudged: max ulp error ``max_ulp`` (at 0.5, correctly rounded: no
    result rounded the wrong way), the special inputs at their limits, the minimum's value
    within ``max_ulp`` (and, at 0.5, x* on the plateau of smallest outputs), no derivative
    of the wrong sign or falsely zero, and the formula it declares."""
    from .limits import OVERALL, Limit, breaches

    verdict = Verdict()
    if result.failure:
        verdict.worse.append(f"could not be measured: {result.failure.reason}")
    verdict.worse += breaches(result, [Limit(OVERALL, max_ulp)], specials=True)
    minimum = result.minimum
    if isinstance(minimum, MinimumFinding):
        if minimum.value_ulp_error > max_ulp:
            verdict.worse.append(f"ulp error of the minimum value "
                                 f"{minimum.value_ulp_error:.4g} > {max_ulp:g}")
        if max_ulp <= 0.5 and not minimum.true_argmin_on_plateau:
            verdict.worse.append("x* is not on the plateau of smallest outputs")
    sign = result.sign
    if isinstance(sign, SignFinding):
        if sign.n_wrong_sign + sign.n_false_zero:
            verdict.worse.append(f"{sign.n_wrong_sign} results of the wrong sign, "
                                 f"{sign.n_false_zero} falsely zero")
        if not sign.x_star_in_crossing:
            verdict.worse.append("the computed derivative does not change sign at x*")
    found = result.fingerprint
    if found is not None and found.mismatch:
        verdict.worse.append(f"declared {found.declared}, its outputs compute {found.formula}")
    return verdict

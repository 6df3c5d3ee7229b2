"""Budgets: each implementation's measured worst case per function, dtype and region, kept as
data (``gelucheck/data/budgets.toml``, shipped with the package), with the known defects that
explain the large ones.

A measurement worse than its budget fails. One clearly better is reported so that the budget
can be tightened - and fails where the budget records a known defect, since the record of the
defect is then out of date (the suite turns red the day that accuracy regresses - or improves).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import tomllib

from .errors import UsageError
from .results import AccuracyResult, ConsistencyResult, MinimumFinding, SignFinding, SweepResult

HEADER = """\
# gelucheck accuracy budgets: each implementation's measured worst case (max ulp, overall and
# per region of x; the ulp error of its negative minimum; the special inputs it gets wrong).
# Figures are measurements, rounded up to 3 digits, rewritten by
#   gelucheck budgets --write src/gelucheck/data/budgets.toml
# which keeps [defects.*] and each entry's `defects` list: those are written by people, and
# say why a large figure is a known defect of the backend rather than a failure of ours.
"""
DEFAULT_PATH = Path(__file__).resolve().parent / "data" / "budgets.toml"
# "Clearly better": under half the budget and at least a quarter ulp below it.
BETTER_FACTOR = 0.5
BETTER_MARGIN = 0.25


def key(result: AccuracyResult) -> tuple[str, str, str]:
    return result.identity.key


def round_up(value: float, digits: int = 3) -> float:
    """Up to ``digits`` significant digits, never below the value (budgets must hold)."""
    if value == 0 or not math.isfinite(value):
        return value
    scale = 10 ** (digits - 1 - math.floor(math.log10(abs(value))))
    rounded = math.ceil(value * scale) / scale
    return rounded if rounded >= value else math.nextafter(rounded, math.inf)


@dataclass
class Budgets:
    entries: dict[tuple[str, str, str], dict] = field(default_factory=dict)
    defects: dict[str, dict] = field(default_factory=dict)

    def get(self, result: AccuracyResult) -> dict | None:
        return self.entries.get(key(result))


def load(path: str | Path | None = None) -> Budgets:
    path = Path(path or DEFAULT_PATH)
    try:
        data = tomllib.loads(path.read_text())
    except OSError as exc:
        raise UsageError(f"budgets file {path}: cannot be read ({exc.strerror})") from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"budgets file {path}: not valid TOML ({exc})") from None
    budgets = Budgets(defects=data.pop("defects", {}))
    for impl, functions in data.items():
        for function, dtypes in functions.items():
            for dtype, entry in dtypes.items():
                budgets.entries[(impl, function, dtype)] = entry
    for k, entry in budgets.entries.items():
        _check_figures(path, k, entry)
        unknown = [d for d in entry.get("defects", []) if d not in budgets.defects]
        if unknown:
            raise UsageError(f"{path}: {k} names undefined defects {unknown}; defined: "
                             f"{', '.join(budgets.defects)}")
    return budgets


def _check_figures(path: Path, k: tuple, entry: dict) -> None:
    """Every budget figure is a number and not NaN (a NaN budget would pass everything)."""
    figures = {"max_ulp": entry.get("max_ulp"), "minimum_value_ulp": entry.get("minimum_value_ulp",
                                                                              0.0)}
    figures.update({f"regions.{r}": v for r, v in entry.get("regions", {}).items()})
    for name, value in figures.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
            raise UsageError(f"budgets file {path}: {k} {name} = {value!r}; a budget is a "
                             "number of ulps (inf allowed, NaN not)")


def stale_entries(budgets: Budgets, offered: list, known_backends: list[str]) -> list[str]:
    """Entries that name no implementation a known, available backend offers: a misspelt
    name, or an implementation that was renamed or removed. (A backend that is not installed
    here keeps its entries silently.)"""
    present = {(i.id, i.function.name, f.name) for i in offered for f in i.dtypes}
    available = {i.backend for i in offered}
    out = []
    for impl, function, dtype in budgets.entries:
        backend = impl.partition(":")[0]
        if backend not in known_backends or (backend in available
                                              and (impl, function, dtype) not in present):
            out.append(f"[{impl}.{function}.{dtype}]")
    return out


@dataclass
class Verdict:
    worse: list[str] = field(default_factory=list)
    better: list[str] = field(default_factory=list)
    missing: bool = False
    defects: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return self.missing or bool(self.worse) or bool(self.better and self.defects)

    def message(self) -> str:
        if self.missing:
            return ("no budget recorded: record one with `gelucheck budgets --write FILE` "
                    "(gelucheck's own: src/gelucheck/data/budgets.toml)")
        lines = [f"worse than budget: {w}" for w in self.worse]
        if self.better and self.defects:
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


PARTS = ("ulp", "specials", "minimum", "sign", "consistency", "fingerprint")


def judge(result: AccuracyResult, budgets: Budgets) -> Verdict:
    """A result vs its budget, on whichever of the figures, the minimum and the special
    inputs it holds. The defects that count are those that explain those parts (a defect's
    ``affects`` list; all parts when it has none)."""
    entry = budgets.get(result)
    verdict = Verdict()
    if entry is None:
        verdict.missing = True
        return verdict
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


def judge_consistency(result: ConsistencyResult, budgets: Budgets) -> Verdict:
    """Each path's count of outputs that differ from the bulk result, against the counts the
    budget records (``inconsistent``, path -> count; a path not listed: none may differ)."""
    entry = budgets.entries.get(result.identity.key)
    verdict = Verdict()
    if entry is None or "inconsistent" not in entry:
        verdict.missing = True
        return verdict
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


SWEEP_KEY = "sweep"  # the entry's table of figures over all 2^32 float32 inputs


def judge_sweep(result: SweepResult, budgets: Budgets) -> Verdict:
    """An exhaustive sweep against the sweep figures its budget records (``sweep`` in the
    float32 entry: max ulp overall and per region, the share correctly rounded) over the same
    range of encodings - a part is not comparable with the whole."""
    entry = budgets.entries.get(result.identity.key)
    verdict = Verdict()
    if entry is None or SWEEP_KEY not in entry or entry[SWEEP_KEY].get("range") != result.range:
        verdict.missing = True
        return verdict
    verdict.defects = list(entry.get("defects", []))
    recorded = entry[SWEEP_KEY]
    if result.failure:
        verdict.worse.append(f"could not be measured: {result.failure.reason}")
        return verdict
    f = result.figures
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


def sweep_entry(result: SweepResult) -> dict:
    """What a budget records of a whole-float32 sweep: rounded up (down for the share)."""
    f = result.figures
    return {"range": result.range, "max_ulp": round_up(f.max_ulp),
            "regions": {r.name: round_up(r.max_ulp) for r in f.regions},
            "correctly_rounded": math.floor(result.correctly_rounded_fraction * 1e6) / 1e6}


def consistency_entry(result: ConsistencyResult) -> dict:
    return {p.name: p.n_differ for p in result.paths if p.n_differ}


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


def entry_from(result: AccuracyResult, old: dict | None) -> dict:
    """A budget entry recording ``result``; the defects named in ``old`` are kept."""
    f = result.figures
    entry = {"max_ulp": round_up(f.max_ulp),
             "regions": {r.name: round_up(r.max_ulp) for r in f.regions}}
    if entry["max_ulp"] <= 0.5:  # within half an ulp, yet some may round the wrong way
        entry["not_correctly_rounded"] = f.not_correctly_rounded
    if isinstance(result.minimum, MinimumFinding):
        entry["minimum_value_ulp"] = round_up(result.minimum.value_ulp_error)
        entry["true_argmin_on_plateau"] = result.minimum.true_argmin_on_plateau
    if isinstance(result.specials, dict):
        entry["specials_failing"] = sorted(result.failing_specials)
    if isinstance(result.sign, SignFinding):
        entry["wrong_sign"] = result.sign.n_wrong_sign + result.sign.n_false_zero
        entry["x_star_in_crossing"] = result.sign.x_star_in_crossing
    if result.fingerprint is not None:
        entry["fingerprint"] = result.fingerprint.formula
    for measured_elsewhere in ("inconsistent", SWEEP_KEY):  # by `consistency`, by `sweep`
        if old and measured_elsewhere in old:
            entry[measured_elsewhere] = old[measured_elsewhere]
    if old and old.get("defects"):
        entry["defects"] = old["defects"]
        entry["evidence"] = (f"worst x = {f.worst_input!r} ({f.worst_input_hex}): "
                             f"computed {f.computed!r}, exact {f.exact!r}")
    return entry


def _table(parent, key: str):
    """parent[key] as a table, created as a dotted header ([a.b.c]) when missing."""
    import tomlkit

    if key not in parent:
        parent[key] = tomlkit.table(is_super_table=True)
    return parent[key]


def _value(value):
    import tomlkit

    if isinstance(value, dict):
        inline = tomlkit.inline_table()
        inline.update(value)
        return inline
    return value


def write(path: str | Path, budgets: Budgets, header: str = HEADER) -> None:
    """Write ``budgets`` to ``path`` with tomlkit. Into an existing file the figures are
    written in place, so the comments and the order people gave it are kept; new entries
    and defects are added at the end."""
    import tomlkit  # only writing needs it

    path = Path(path)
    if path.exists():
        doc = tomlkit.parse(path.read_text())
    else:
        doc = tomlkit.document()
        for line in header.splitlines():
            doc.add(tomlkit.comment(line.removeprefix("# ").removeprefix("#")))
        doc.add(tomlkit.nl())
    defects = _table(doc, "defects")
    for name, defect in budgets.defects.items():
        if name not in defects:
            defects[name] = {k: _value(v) for k, v in defect.items()}
    for (impl, function, dtype), entry in budgets.entries.items():
        table = _table(_table(_table(doc, impl), function), dtype)
        for k in [k for k in table if k not in entry]:
            del table[k]
        for k, v in entry.items():
            table[k] = _value(v)
    path.write_text(tomlkit.dumps(doc))

"""Budgets: each implementation's measured worst case per function, dtype and region, kept as
data (``gelucheck/data/budgets.toml``, shipped with the package), with the known defects that
explain the large ones.

A measurement worse than its budget fails. One clearly better is reported so that the budget
can be tightened - and fails where the budget records a known defect, since the record of the
defect is then out of date (the suite turns red the day that accuracy regresses - or improves).
"""
from __future__ import annotations

import math
import os
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .checks.regions import REGION_NAMES
from .errors import UsageError
from .results import (
    AccuracyResult,
    ConsistencyResult,
    Identity,
    MinimumFinding,
    SearchResult,
    SignFinding,
    SweepResult,
)
from .ulp import is_ulp_limit

HEADER = """\
# gelucheck accuracy budgets: each implementation's measured worst case (max ulp, overall and
# per region of x; the ulp error of its negative minimum; the special inputs it gets wrong).
# Figures are measurements, rounded up to 3 digits, rewritten by
#   gelucheck budgets --write src/gelucheck/data/budgets.toml
# which keeps [defects.*] and each entry's `defects` list: those are written by people, and
# say why a large figure is a known defect of the backend rather than a failure of ours.
"""
DEFAULT_PATH = Path(__file__).resolve().parent / "data" / "budgets.toml"
# What a result with no entry is held to (judge.judge_default): correctly rounded.
DEFAULT_MAX_ULP = 0.5
# The parts of a result a defect may explain (a defect's `affects`; all where it names none)
PARTS = ("ulp", "specials", "minimum", "sign", "consistency", "fingerprint")
SWEEP_KEY = "sweep"  # the entry's table of figures over all 2^32 float32 inputs
SEARCH_KEY = "search"  # the float64 entry's: what a seeded search found (gelucheck search)
RECORDED_KEY = "recorded"  # per backend: the release (and kernel tiers) recorded with
TIER_KEY = "tier"  # per kernel tier: the entries whose figures differ from the first tier's
MEASURED_ELSEWHERE = ("inconsistent", SWEEP_KEY, SEARCH_KEY)  # by consistency, sweep, search


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
    """Entries by (implementation id, function, dtype); for a backend whose figures depend on
    the CPU's kernels (tiers.py), the entries apply to the tiers it was recorded on: ``entries``
    hold those of its first tier, and ``tiered[tier]`` the entries where another tier's figures
    differ. ``recorded[backend]`` names the release each was recorded with: ``{"release": R}``,
    or ``{"tiers": {tier: R, ...}}``."""

    entries: dict[tuple[str, str, str], dict] = field(default_factory=dict)
    defects: dict[str, dict] = field(default_factory=dict)
    # what a result with no entry is held to (judge.judge_default), e.g. --gelucheck-max-ulp
    default_max_ulp: float = DEFAULT_MAX_ULP
    tiered: dict[str, dict[tuple[str, str, str], dict]] = field(default_factory=dict)
    recorded: dict[str, dict] = field(default_factory=dict)

    def get(self, result) -> dict | None:
        return self.lookup(result.identity)

    def tiers(self, backend: str) -> dict[str, str] | None:
        """{tier: release} the backend's entries were recorded on; None: not per tier."""
        return self.recorded.get(backend, {}).get("tiers")

    def lookup(self, identity: Identity, tier: str | None = None) -> dict | None:
        """The entry that holds for ``identity`` on its kernel tier (or on ``tier``): None
        where nothing was recorded for it, or for its tier (:meth:`missing_tier`)."""
        tier = tier or identity.kernel_tier
        tiers = self.tiers(identity.backend)
        if tiers is None or tier is None:
            return self.entries.get(identity.key)
        if tier not in tiers:
            return None
        return self.tiered.get(tier, {}).get(identity.key, self.entries.get(identity.key))

    def missing_tier(self, identity: Identity) -> str | None:
        """The result's tier where its backend was recorded on other tiers only."""
        tiers = self.tiers(identity.backend)
        if tiers is None or identity.kernel_tier is None or identity.kernel_tier in tiers:
            return None
        return identity.kernel_tier

    def nearest_tier(self, backend: str, tier: str) -> str | None:
        """The recorded tier whose name shares the longest start with ``tier`` (avx512_bf16
        for avx512_bf16+mkl-native-intel; the later one on a tie)."""
        def shared(name: str) -> int:
            return len(os.path.commonprefix([name, tier]))  # noqa: RUF071 - names, not paths
        recorded = list(self.tiers(backend) or ())
        return max(reversed(recorded), key=shared) if recorded else None

    def release(self, identity: Identity) -> str | None:
        """The release of the library the entry for ``identity`` was recorded with."""
        recorded = self.recorded.get(identity.backend, {})
        tiers = recorded.get("tiers")
        if tiers is not None and identity.kernel_tier is not None:
            return tiers.get(identity.kernel_tier)
        return recorded.get("release")

    def record(self, identity: Identity, entry: dict) -> None:
        """Put ``entry``, measured on ``identity``'s tier and release, in its place: a tier
        other than the backend's first holds only the entries that differ from the first's;
        where the first tier's entry changes, the other tiers keep the one they had."""
        k, tier = identity.key, identity.kernel_tier
        recorded = self.recorded.setdefault(identity.backend, {})
        if tier is None:
            if identity.release:
                recorded["release"] = identity.release
            self.entries[k] = entry
            return
        tiers = recorded.setdefault("tiers", {})
        first = next(iter(tiers), tier)
        tiers[tier] = identity.release or ""
        if tier != first:
            if not _same(self.entries.get(k), entry):
                self.tiered.setdefault(tier, {})[k] = entry
            else:
                self.tiered.get(tier, {}).pop(k, None)
            return
        old = self.entries.get(k)
        if old is not None and old != entry:
            for other in tiers:
                if other != tier:
                    self.tiered.setdefault(other, {}).setdefault(k, old)
        self.entries[k] = entry
        for other in self.tiered.values():
            if other.get(k) == entry:
                del other[k]

    def all_entries(self):
        """(tier or None, key, entry) for every entry of the file."""
        yield from ((None, k, e) for k, e in self.entries.items())
        yield from ((t, k, e) for t, entries in self.tiered.items() for k, e in entries.items())


def _same(first: dict | None, entry: dict) -> bool:
    """Whether ``entry`` records what ``first`` does; what `consistency` and `sweep` measure
    counts only where ``entry`` holds it (not measured is not different), and the evidence,
    a sentence about the worst input, not at all."""
    if first is None:
        return False
    return all(first.get(k) == entry.get(k) for k in {*first, *entry} - {"evidence"}
               if k in entry or k not in MEASURED_ELSEWHERE)


def load(path: str | Path | None = None) -> Budgets:
    path = Path(path or DEFAULT_PATH)
    try:
        data = tomllib.loads(path.read_text())
    except OSError as exc:
        raise UsageError(f"budgets file {path}: cannot be read ({exc.strerror})") from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"budgets file {path}: not valid TOML ({exc})") from None
    budgets = Budgets(defects=data.pop("defects", {}), recorded=data.pop(RECORDED_KEY, {}))
    tiered = data.pop(TIER_KEY, {})
    budgets.entries = _entries(data)
    budgets.tiered = {tier: _entries(tree) for tier, tree in tiered.items()}
    for backend, recorded in budgets.recorded.items():
        if not isinstance(recorded.get("tiers", {}), dict):
            raise UsageError(f"budgets file {path}: [{RECORDED_KEY}.{backend}] tiers must map "
                             "each tier to the release it was recorded with")
    for tier, k, entry in budgets.all_entries():
        where = k if tier is None else (f"tier {tier}", *k)
        _check_figures(path, where, entry)
        unknown = [d for d in entry.get("defects", []) if d not in budgets.defects]
        if unknown:
            raise UsageError(f"{path}: {where} names undefined defects {unknown}; defined: "
                             f"{', '.join(budgets.defects)}")
    return budgets


def _entries(tree: dict) -> dict[tuple[str, str, str], dict]:
    return {(impl, function, dtype): entry for impl, functions in tree.items()
            for function, dtypes in functions.items() for dtype, entry in dtypes.items()}


def _check_figures(path: Path, k: tuple, entry: dict) -> None:
    """Every budget figure, the entry's and its sweep's and search's, is a number of ulps,
    0 or more (a NaN budget would pass everything, a negative one fail everything), and
    every region named is one the figures have (a budget for another would never apply)."""
    figures = {"max_ulp": entry.get("max_ulp"), "minimum_value_ulp": entry.get("minimum_value_ulp",
                                                                              0.0)}
    parts = {"": entry, **{f"{kind}.": entry[kind] for kind in ("sweep", "search")
                          if isinstance(entry.get(kind), dict)}}
    for prefix, part in parts.items():
        if prefix:  # (the entry's own max_ulp is above, checked first)
            figures[f"{prefix}max_ulp"] = part.get("max_ulp")
        regions = part.get("regions", {})
        if unknown := sorted(set(regions) - set(REGION_NAMES)):
            raise UsageError(f"budgets file {path}: {k} {prefix}regions names {unknown}, no "
                             f"region of x; valid choices: {', '.join(REGION_NAMES)}")
        figures.update({f"{prefix}regions.{r}": v for r, v in regions.items()})
    for name, value in figures.items():
        if not is_ulp_limit(value):
            raise UsageError(f"budgets file {path}: {k} {name} = {value!r}; a budget is a "
                             "number of ulps, 0 or more (inf allowed, NaN not)")


def stale_entries(budgets: Budgets, offered: list, known_backends: list[str]) -> list[str]:
    """Entries that name no implementation a known, available backend offers: a misspelt
    name, or an implementation that was renamed or removed. (A backend that is not installed
    here keeps its entries silently; so do a user's callables, where none is offered.)"""
    present = {(i.id, i.function.name, f.name) for i in offered for f in i.dtypes}
    available = {i.backend for i in offered}
    known = [*known_backends, "user"]
    out = []
    for tier, (impl, function, dtype), _ in budgets.all_entries():
        backend = impl.partition(":")[0]
        if backend not in known or (backend in available
                                              and (impl, function, dtype) not in present):
            out.append(f"[{'' if tier is None else f'{TIER_KEY}.{tier}.'}"
                       f"{impl}.{function}.{dtype}]")
    return out


def stale_warnings(budgets: Budgets, path, users: Sequence = ()) -> list[str]:
    """What the command line and the pytest plugin warn of: each entry of the budgets file at
    ``path`` that names no implementation here (``users``: the user's callables measured)."""
    from .backends import backend_names, select

    return [f"{path}: {entry} names no implementation here; misspelt or removed?"
            for entry in stale_entries(budgets, select().implementations + list(users),
                                       backend_names())]


def sweep_entry(result: SweepResult) -> dict:
    """What a budget records of a whole-float32 sweep: rounded up (down for the share)."""
    f = result.figures
    assert f is not None, "only a measured sweep is recorded"
    return {"range": result.range, "max_ulp": round_up(f.max_ulp),
            "regions": {r.name: round_up(r.max_ulp) for r in f.regions},
            "correctly_rounded": math.floor(result.correctly_rounded_fraction * 1e6) / 1e6}


def search_entry(result: SearchResult) -> dict:
    """What a budget records of a float64 search: the search (seed and evaluations: the same
    ones give the same result) and what it found, rounded up."""
    f = result.figures
    assert f is not None, "only a measured search is recorded"
    return {"seed": result.seed, "evaluations": result.evaluations,
            "max_ulp": round_up(f.max_ulp), "worst_input": f.worst_input_hex}


def consistency_entry(result: ConsistencyResult) -> dict:
    return {p.name: p.n_differ for p in result.paths if p.n_differ}


def entry_from(result: AccuracyResult, old: dict | None) -> dict:
    """A budget entry recording ``result``; the defects named in ``old`` are kept."""
    f = result.figures
    assert f is not None, "only a measured result is recorded"
    entry: dict[str, object] = {"max_ulp": round_up(f.max_ulp),
             "regions": {r.name: round_up(r.max_ulp) for r in f.regions}}
    if round_up(f.max_ulp) <= 0.5:  # within half an ulp, yet some may round the wrong way
        entry["not_correctly_rounded"] = f.not_correctly_rounded
    if f.impossible:
        entry["impossible"] = f.impossible
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
    for measured_elsewhere in MEASURED_ELSEWHERE:
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
    and defects are added at the end, and a tier's entry that now equals the first tier's
    is removed."""
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
    recorded = _table(doc, RECORDED_KEY)
    for backend, facts in budgets.recorded.items():
        recorded[backend] = {k: _value(v) for k, v in facts.items()}
    _write_entries(doc, budgets.entries)
    tiers = _table(doc, TIER_KEY)
    for tier, entries in budgets.tiered.items():
        _write_entries(_table(tiers, tier), entries)
    for tier in list(tiers):
        _drop_absent(tiers[tier], budgets.tiered.get(tier, {}))
        if not tiers[tier]:
            del tiers[tier]
    for empty in [k for k in (RECORDED_KEY, TIER_KEY) if not doc[k]]:
        del doc[empty]
    path.write_text(tomlkit.dumps(doc))


def _write_entries(parent, entries: dict) -> None:
    for (impl, function, dtype), entry in entries.items():
        table = _table(_table(_table(parent, impl), function), dtype)
        for k in [k for k in table if k not in entry]:
            del table[k]
        for k, v in entry.items():
            table[k] = _value(v)


def _drop_absent(tree, entries: dict) -> None:
    """Remove from a tier's tables the entries it no longer holds (and emptied tables)."""
    for impl in list(tree):
        for function in list(tree[impl]):
            for dtype in list(tree[impl][function]):
                if (impl, function, dtype) not in entries:
                    del tree[impl][function][dtype]
            if not tree[impl][function]:
                del tree[impl][function]
        if not tree[impl]:
            del tree[impl]

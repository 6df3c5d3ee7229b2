"""What got worse or better between two JSON reports (two tox envs, two torch releases)."""
from __future__ import annotations

import math

from ..results import (
    AccuracyResult,
    ConsistencyResult,
    DriftResult,
    MinimumFinding,
    Result,
    SearchResult,
)
from .environment import kernel_tiers
from .tables import fmt_ulp

# A change below both of these is noise (a reference refined in the 9th digit, the sweep's
# 2^-16-ulp reference), not a finding.
RELATIVE_TOLERANCE = 1e-9
ABSOLUTE_TOLERANCE_ULP = 1e-6


def _key(r: Result) -> tuple:
    if isinstance(r, DriftResult):
        return (r.kind, r.backend, r.exact_implementation, r.tanh_implementation, r.dtype)
    return (r.kind, r.identity)


def _figures(r: Result) -> dict[str, float]:
    """The figures compared, larger worse; inf for what failed to be measured."""
    if isinstance(r, ConsistencyResult):
        return _path_figures(r)
    if isinstance(r, DriftResult):
        f = r.figures
        return {"max ulp": f.max_ulp if f else math.inf, "max |diff|": f.max_abs if f else math.inf}
    if r.figures is None:
        return {"max ulp": math.inf}
    out = {"max ulp": r.figures.max_ulp}
    if isinstance(r, SearchResult):  # a search has one figure: its worst input's
        return out
    for region in r.figures.regions:
        out[f"max ulp {region.name}"] = region.max_ulp
    if isinstance(r, AccuracyResult) and isinstance(r.minimum, MinimumFinding):
        out["minimum ulp"] = r.minimum.value_ulp_error
    return out


def _path_figures(r: ConsistencyResult) -> dict[str, float]:
    """A consistency result's: the bulk result's max ulp, and per path the outputs that
    differ from it and its own max ulp (where measured)."""
    out = {"bulk max ulp": math.inf if r.bulk_max_ulp is None else r.bulk_max_ulp}
    for p in r.paths:
        out[f"{p.name} outputs differing"] = math.inf if p.error else p.n_differ
        if p.max_ulp is not None:
            out[f"{p.name} max ulp"] = p.max_ulp
    return out


def _formula_change(a: Result, b: Result) -> tuple[str, bool] | None:
    """(what changed, whether the new one is the declared form) when the fingerprint moved."""
    fa, fb = getattr(a, "fingerprint", None), getattr(b, "fingerprint", None)
    if fa is None or fb is None or fa.formula == fb.formula:
        return None
    return f"computes {fa.formula} -> {fb.formula} (declared {fb.declared})", not fb.mismatch


def tier_lines(old: list[Result], new: list[Result]) -> list[str]:
    """One line per backend measured on another kernel tier in each report: its figures are
    compared as they are, and a difference may be the kernels' rather than the release's."""
    a, b = kernel_tiers(old), kernel_tiers(new)
    return [f"{backend}: kernel tier {a[backend]} -> {b[backend]} (compared as measured: a "
            "difference may be the kernels', not the release's)"
            for backend in sorted(a.keys() & b.keys()) if a[backend] != b[backend]]


def compare(old: list[Result], new: list[Result]) -> dict[str, list[str]]:
    """{"tiers": [...], "worse": [...], "better": [...], "only_old": [...], "only_new": [...]}"""
    before = {_key(r): r for r in old}
    after = {_key(r): r for r in new}
    label = {**{k: r.label for k, r in before.items()}, **{k: r.label for k, r in after.items()}}
    out: dict[str, list[str]] = {"tiers": tier_lines(old, new), "worse": [], "better": [],
                                 "only_old": [], "only_new": []}
    for key in before.keys() & after.keys():
        moved = _formula_change(before[key], after[key])
        if moved:  # a kernel that now computes another form: worse unless it now matches
            out["better" if moved[1] else "worse"].append(f"{label[key]}: {moved[0]}")
        a, b = _figures(before[key]), _figures(after[key])
        for name in a.keys() & b.keys():
            x, y = a[name], b[name]
            if x == y or (math.isfinite(x) and math.isfinite(y) and (
                    abs(x - y) <= RELATIVE_TOLERANCE * max(abs(x), abs(y))
                    or abs(x - y) <= ABSOLUTE_TOLERANCE_ULP)):
                continue
            a_text, b_text = fmt_ulp(x), fmt_ulp(y)
            if a_text == b_text:  # show the digits where they differ
                a_text, b_text = f"{x:.9g}", f"{y:.9g}"
            line = f"{label[key]}: {name} {a_text} -> {b_text}"
            out["worse" if y > x else "better"].append(line)
    out["only_old"] = sorted(label[k] for k in before.keys() - after.keys())
    out["only_new"] = sorted(label[k] for k in after.keys() - before.keys())
    for v in out.values():
        v.sort()
    return out


TITLES = {"tiers": "Measured on other kernel tiers", "worse": "Worse", "better": "Better",
          "only_old": "Only in the old report", "only_new": "Only in the new report"}


def render(diff: dict[str, list[str]]) -> str:
    parts = []
    for k, title in TITLES.items():
        if diff[k]:
            parts.append(f"{title} ({len(diff[k])}):\n" + "\n".join(f"  {x}" for x in diff[k]))
    return "\n\n".join(parts) or "No differences."

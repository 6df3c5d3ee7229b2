"""What got worse or better between two JSON reports (two tox envs, two torch releases)."""
from __future__ import annotations

import math

from .tables import fmt_ulp

# A change below both of these is noise (a reference refined in the 9th digit, the sweep's
# 2^-16-ulp reference), not a finding.
RELATIVE_TOLERANCE = 1e-9
ABSOLUTE_TOLERANCE_ULP = 1e-6


def _key(r: dict) -> tuple:
    if r.get("kind") == "drift":
        return ("drift", r["backend"], r["exact_implementation"], r["tanh_implementation"],
                r["dtype"])
    return ("accuracy", r["backend"], r["implementation"], r["function"], r["dtype"],
            r.get("device", "cpu"))


def _figures(r: dict) -> dict[str, float]:
    if r.get("kind") == "drift":
        return {"max ulp": r.get("max_ulp", math.inf), "max |diff|": r.get("max_abs", math.inf)}
    out = {"max ulp": r.get("max_ulp", math.inf)}
    for region in r.get("regions", []):
        out[f"max ulp {region['name']}"] = region["max_ulp"]
    if r.get("minimum") and "value_ulp_error" in r["minimum"]:
        out["minimum ulp"] = r["minimum"]["value_ulp_error"]
    return out


def _label(key: tuple) -> str:
    if key[0] == "drift":
        return f"drift {key[1]}:{key[2]} vs {key[3]} {key[4]}"
    return f"{key[1]}:{key[2]} {key[3]} {key[4]}" + (f" ({key[5]})" if key[5] != "cpu" else "")


def compare(old: list[dict], new: list[dict]) -> dict[str, list[str]]:
    """{"worse": [...], "better": [...], "only_old": [...], "only_new": [...]}"""
    before = {_key(r): r for r in old}
    after = {_key(r): r for r in new}
    out = {"worse": [], "better": [], "only_old": [], "only_new": []}
    for key in before.keys() & after.keys():
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
            line = f"{_label(key)}: {name} {a_text} -> {b_text}"
            out["worse" if y > x else "better"].append(line)
    out["only_old"] = sorted(_label(k) for k in before.keys() - after.keys())
    out["only_new"] = sorted(_label(k) for k in after.keys() - before.keys())
    for v in out.values():
        v.sort()
    return out


def render(diff: dict[str, list[str]]) -> str:
    titles = {"worse": "Worse", "better": "Better", "only_old": "Only in the old report",
              "only_new": "Only in the new report"}
    parts = []
    for k, title in titles.items():
        if diff[k]:
            parts.append(f"{title} ({len(diff[k])}):\n" + "\n".join(f"  {x}" for x in diff[k]))
    return "\n\n".join(parts) or "No differences."

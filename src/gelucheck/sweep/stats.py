"""Merging chunk statistics, and turning them into the result schema of ``gelucheck check``."""
from __future__ import annotations

from ..checks.regions import REGIONS
from .chunk import combine, hex32, histogram_edges, value_of


def merge_impl(a: dict, b: dict) -> dict:
    if "error" in a or "error" in b:
        return a if "error" in a else b
    out = combine(a, b)
    top = b if (b["max_abs"], -b["max_abs_bits"]) > (a["max_abs"], -a["max_abs_bits"]) else a
    out["max_abs"], out["max_abs_bits"] = top["max_abs"], top["max_abs_bits"]
    for k in ("not_correctly_rounded", "eval_s", "check_s"):
        out[k] = a[k] + b[k]
    out["histogram"] = [p + q for p, q in zip(a["histogram"], b["histogram"])]
    regions = dict(a["regions"])
    for name, r in b["regions"].items():
        regions[name] = combine(regions[name], r) if name in regions else r
    out["regions"] = regions
    return out


def merge_chunks(a: dict, b: dict) -> dict:
    impls = dict(a["implementations"])
    for key, stats in b["implementations"].items():
        impls[key] = merge_impl(impls[key], stats) if key in impls else stats
    return {"function": a["function"],
            "start": min(a["start"], b["start"]), "stop": max(a["stop"], b["stop"]),
            "n_slow_reference": a["n_slow_reference"] + b["n_slow_reference"],
            "reference_s": a["reference_s"] + b["reference_s"], "implementations": impls}


def merge_all(chunks: list[dict]) -> dict | None:
    """Merge in the order of the encodings, so that the result does not depend on the order
    in which chunks finished (or on an interruption between them)."""
    out = None
    for c in sorted(chunks, key=lambda c: c["start"]):
        out = c if out is None else merge_chunks(out, c)
    return out


def results(merged: dict, impls: list, function: str, span: tuple[int, int]) -> list[dict]:
    """The merged statistics in the schema of ``gelucheck check``, one result per
    implementation, plus the histogram and the count that is not correctly rounded."""
    out = []
    for impl in impls:
        s = merged["implementations"].get(f"{impl.id}/{impl.function}")
        if s is None:
            continue
        base = {"kind": "sweep", "backend": impl.backend, "implementation": impl.name,
                "function": impl.function, "reference": function, "dtype": "float32",
                "device": impl.device, "how": impl.how("float32"),
                "range": [hex32(span[0]), hex32(span[1])],
                "n_slow_reference": merged["n_slow_reference"], "error": None}
        if "error" in s:
            base.update(error=s["error"], max_ulp=float("inf"))
            out.append(base)
            continue
        base.update({
            "n_inputs": s["n"], "max_ulp": s["max_ulp"],
            "mean_ulp": s["sum_ulp"] / s["n_finite"] if s["n_finite"] else float("inf"),
            "n_infinite": s["n"] - s["n_finite"],
            "worst_input": value_of(s["worst_bits"]), "worst_input_hex": hex32(s["worst_bits"]),
            "computed": s["computed"], "exact": s["exact"],
            "max_abs_error": s["max_abs"], "max_abs_at": value_of(s["max_abs_bits"]),
            "not_correctly_rounded": s["not_correctly_rounded"],
            "correctly_rounded_fraction": 1 - s["not_correctly_rounded"] / s["n"],
            "histogram": {"edges": histogram_edges(), "counts": s["histogram"]},
            # CPU seconds summed over workers: the implementation's own evaluation, the
            # comparison with the reference, and the reference (shared by all in the pass)
            "eval_s": s["eval_s"], "check_s": s["check_s"],
            "reference_s": merged["reference_s"],
            "regions": [],
        })
        for name, lo, hi in REGIONS:
            r = s["regions"].get(name)
            if r:
                base["regions"].append({
                    "name": name, "lo": lo, "hi": hi, "n": r["n"], "max_ulp": r["max_ulp"],
                    "mean_ulp": r["sum_ulp"] / r["n_finite"] if r["n_finite"] else float("inf"),
                    "worst_input": value_of(r["worst_bits"]),
                    "worst_input_hex": hex32(r["worst_bits"])})
        out.append(base)
    return out

"""Merging chunk statistics, and turning them into the result schema of ``gelucheck check``."""
from __future__ import annotations

import numpy as np

from ..backends import identity
from ..checks.regions import REGIONS, region
from ..formats import FLOAT32
from ..results import ErrorFigures, Failure, SweepResult

# Histogram of ulp errors: bin 0 is [0, 1/2] (correctly rounded), bin 1 (1/2, 1), bin k >= 2
# [2^(k-2), 2^(k-1)), the second last everything from 2^(BINS-3) up, the last inf and NaN.
BINS = 36


def histogram_edges() -> list[float]:
    return [0.0, 0.5] + [2.0 ** (k - 2) for k in range(2, BINS - 1)] + [float("inf")]


def histogram(err: np.ndarray) -> np.ndarray:
    """Counts per bin of errors above 1/2 (bin 0 is left for the caller to fill).

    The bin is read off the float64 exponent field: err in [2^k, 2^(k+1)) has the field
    1023 + k and goes to bin k + 2; inf (field 2047) to the last bin. The fields are sorted
    as int16 and the bins' first positions found by bisection: np.bincount's one counter per
    input stalls on repeated bins and was 3x slower here (a bad implementation has many)."""
    field = (err.view(np.int64) >> 52).astype(np.int16)
    field.sort()
    starts = np.searchsorted(field, _FIRST_FIELDS, "left")  # bins 1 .. BINS-2, then inf
    counts = np.zeros(BINS, dtype=np.int64)
    counts[1:] = np.diff(starts, append=len(field))
    return counts


# the smallest exponent field of bins 1 .. BINS-2 ((1/2, 1) is field 1022), then inf's
_FIRST_FIELDS = np.array([1022 + k for k in range(BINS - 2)] + [2047], dtype=np.int16)


def combine(a: dict, b: dict) -> dict:
    """Two _stats of disjoint inputs as one. Sums add; the maximum keeps its input (the lower
    encoding on a tie, so that the result never depends on the order of merging)."""
    top = b if (b["max_ulp"], -b["worst_bits"]) > (a["max_ulp"], -a["worst_bits"]) else a
    out = dict(a)
    out.update({"n": a["n"] + b["n"], "sum_ulp": a["sum_ulp"] + b["sum_ulp"],
                "n_finite": a["n_finite"] + b["n_finite"], "max_ulp": top["max_ulp"],
                "worst_bits": top["worst_bits"],
                "not_correctly_rounded": a["not_correctly_rounded"]
                + b["not_correctly_rounded"]})
    for k in ("computed", "exact"):
        if k in top:
            out[k] = top[k]
    return out


def merge_impl(a: dict, b: dict) -> dict:
    if "error" in a or "error" in b:
        return a if "error" in a else b
    out = combine(a, b)
    top = b if (b["max_abs"], -b["max_abs_bits"]) > (a["max_abs"], -a["max_abs_bits"]) else a
    out["max_abs"], out["max_abs_bits"] = top["max_abs"], top["max_abs_bits"]
    for k in ("eval_s", "check_s", "guard_s"):
        out[k] = a.get(k, 0.0) + b.get(k, 0.0)  # (guard_s: not in older checkpoints)
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
            "reference_s": a["reference_s"] + b["reference_s"],
            "task_s": a.get("task_s", 0.0) + b.get("task_s", 0.0), "implementations": impls}


def merge_all(chunks: list[dict]) -> dict | None:
    """Merge in the order of the encodings, so that the result does not depend on the order
    in which chunks finished (or on an interruption between them)."""
    out = None
    for c in sorted(chunks, key=lambda c: c["start"]):
        out = c if out is None else merge_chunks(out, c)
    return out


def results(merged: dict, impls: list, span: tuple[int, int]) -> list[SweepResult]:
    """The merged statistics in the schema of ``gelucheck check``, one result per
    implementation, plus the histogram and the count that is not correctly rounded."""
    out = []
    for impl in impls:
        s = merged["implementations"].get(f"{impl.id}/{impl.function.name}")
        if s is None:
            continue
        result = SweepResult(identity(impl, FLOAT32),
                             impl.reference_function.name, impl.how(FLOAT32),
                             [f"0x{span[0]:08x}", f"0x{span[1]:08x}"],
                             merged["n_slow_reference"])
        out.append(result)
        if "error" in s:
            result.failure = Failure(s["error"])
            continue
        mean = lambda r: r["sum_ulp"] / r["n_finite"] if r["n_finite"] else float("inf")
        regions = [region(name, lo, hi, r["n"], r["max_ulp"], mean(r),
                          FLOAT32.from_bits(r["worst_bits"]), FLOAT32,
                          r["not_correctly_rounded"])
                   for name, lo, hi in REGIONS if (r := s["regions"].get(name))]
        worst = FLOAT32.from_bits(s["worst_bits"])
        result.figures = ErrorFigures(
            n_inputs=s["n"], max_ulp=s["max_ulp"], mean_ulp=mean(s),
            n_infinite=s["n"] - s["n_finite"],
            not_correctly_rounded=s["not_correctly_rounded"], worst_input=float(worst),
            worst_input_hex=FLOAT32.hex(worst), computed=s["computed"], exact=s["exact"],
            max_abs_error=s["max_abs"], max_abs_at=FLOAT32.value_of(s["max_abs_bits"]),
            regions=regions)
        result.histogram = {"edges": histogram_edges(), "counts": s["histogram"]}
        # CPU seconds summed over workers: the implementation's own evaluation, the
        # comparison with the reference, and the reference (shared by all in the pass)
        result.eval_s, result.check_s = s["eval_s"], s["check_s"]
        result.guard_s = s.get("guard_s", 0.0)
        result.reference_s = merged["reference_s"]
        result.task_s = merged.get("task_s", 0.0)  # (checkpoints of older versions lack it)
    return out

"""Typed sweep statistics (gelucheck.sweep.stats) as plain dicts, for tests that compare two
of them after dropping what may differ (timings, sums to float64's rounding)."""
import dataclasses
import math

from gelucheck.sweep.stats import ChunkStats, Figures, ImplFailure, ImplStats


def plain(value):
    """A ChunkStats, ImplStats, ImplFailure or Figures as dicts: an implementation's whole
    figures at its top level beside its regions and histogram (a list); its exact and
    computed values left out where they were not set (NaN, which equals nothing), and the
    timings (which never agree) everywhere."""
    if isinstance(value, ChunkStats):
        out = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        out["implementations"] = {k: plain(v) for k, v in value.implementations.items()}
        del out["reference_s"], out["task_s"]
        return out
    if isinstance(value, ImplFailure):
        return {"error": value.error}
    if isinstance(value, ImplStats):
        out = dataclasses.asdict(value)
        whole = out.pop("whole")
        out["histogram"] = list(out["histogram"])
        for key in ("exact", "computed"):
            if math.isnan(out[key]):
                del out[key]
        for key in ("eval_s", "check_s", "guard_s"):
            del out[key]
        return {**whole, **out}
    if isinstance(value, Figures):
        return dataclasses.asdict(value)
    raise TypeError(f"not sweep statistics: {value!r}")

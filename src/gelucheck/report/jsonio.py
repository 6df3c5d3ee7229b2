"""Reports as JSON: an object with the schema version, gelucheck's version and the list of
results; infinite and NaN figures as the strings "inf", "-inf", "nan". Reports of schema 1
(a bare list of results) are still read."""
from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

from .. import __version__
from ..errors import UsageError
from ..results import AccuracyResult, Result, SearchResult, SweepResult, from_json

SCHEMA_VERSION = 2


def _clean(value):
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


# fields that are words, never figures: a signature named "nan" stays a name
TEXT_FIELDS = frozenset({"name"})


def _restore(value):
    if value in ("inf", "-inf", "nan"):
        return float(value)
    if isinstance(value, dict):
        return {k: v if k in TEXT_FIELDS else _restore(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_restore(v) for v in value]
    return value


def encode(data) -> str:
    """Plain data (dicts, lists, numbers) as strict JSON, non-finite numbers as strings."""
    return json.dumps(_clean(data), indent=1, allow_nan=False)


def decode(text: str):
    return _restore(json.loads(text))


def dumps(results: Sequence[Result]) -> str:
    """The results alone, as a JSON list (what the pytest plugin passes between processes)."""
    return encode([r.to_json() for r in results])


def loads(text: str) -> list[Result]:
    return [from_json(d) for d in decode(text)]


def report_text(results: Sequence[Result]) -> str:
    from .environment import describe

    document = {"schema_version": SCHEMA_VERSION, "gelucheck": __version__,
                "environment": describe(results), "results": [_with_bound(r) for r in results]}
    return json.dumps(_clean(document), indent=1, allow_nan=False) + "\n"


def _with_bound(result: Result) -> dict:
    """A result's JSON, with the documented bound beside its measured max ulp where one
    covers it (data/published_bounds.toml): ``documented`` = max_ulp, library, source, how the
    document counts ulps (``metric``), the measured figure counted so (``counted_*``:
    published.Counted) and whether it is above, and over which inputs it was measured
    (``measured_over``: every input, range, sample or search). Read back, it is shown again from
    the file."""
    from .. import published

    out = result.to_json()
    if not isinstance(result, (AccuracyResult, SweepResult, SearchResult)):
        return out
    bound = published.bound_for(result)
    if bound is not None:  # (a result that was not measured has none)
        counted = bound.counted(result)
        out["documented"] = {"max_ulp": bound.max_ulp, "library": bound.library,
                             "source": bound.source, "metric": bound.metric,
                             "above": bound.exceeded_by(result),
                             # the measured figure as the document counts it
                             "counted_at_worst": counted.at_worst,
                             "counted_settled": counted.settled,
                             "counted_at_most": counted.at_most,
                             "measured_over": published.coverage(result)}
    return out


def write(results: Sequence[Result], path: str | Path) -> None:
    Path(path).write_text(report_text(results))


def read(path: str | Path) -> list[Result]:
    """The results of a report file; refused with the file named when it is not one, or of a
    schema this version does not know."""
    return read_report(path)[0]


def read_report(path: str | Path) -> tuple[list[Result], dict | None]:
    """(results, environment) of a report file (schema 1 has no environment)."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"{path}: not a gelucheck JSON report ({exc})") from None
    environment = data.get("environment") if isinstance(data, dict) else None
    if isinstance(data, list):
        results = data  # schema 1
    elif isinstance(data, dict) and "results" in data:
        version = data.get("schema_version")
        if not isinstance(version, int) or version > SCHEMA_VERSION:
            raise UsageError(f"{path}: report schema {version!r} is newer than this gelucheck "
                             f"({__version__}) reads (up to {SCHEMA_VERSION}): upgrade gelucheck")
        results = data["results"]
    else:
        raise UsageError(f"{path}: not a gelucheck JSON report (expected an object with "
                         "'results', or a list of results)")
    try:
        return [from_json(d) for d in _restore(results)], environment
    except UsageError as exc:
        raise UsageError(f"{path}: {exc}") from None

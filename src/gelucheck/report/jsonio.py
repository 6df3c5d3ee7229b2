"""Results as JSON: a list of result objects; infinite and NaN figures as strings."""
from __future__ import annotations

import json
import math
from pathlib import Path


def _clean(value):
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def _restore(value):
    if value in ("inf", "-inf", "nan"):
        return float(value)
    if isinstance(value, dict):
        return {k: _restore(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_restore(v) for v in value]
    return value


def dumps(results: list[dict]) -> str:
    return json.dumps(_clean(results), indent=1, allow_nan=False)


def write(results: list[dict], path: str | Path) -> None:
    Path(path).write_text(dumps(results) + "\n")


def loads(text: str) -> list[dict]:
    return _restore(json.loads(text))


def read(path: str | Path) -> list[dict]:
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not a gelucheck JSON report ({exc})") from None
    if not isinstance(data, list):
        raise ValueError(f"{path}: not a gelucheck JSON report (expected a list of results)")
    return _restore(data)

"""Where a report was measured: gelucheck, Python, the platform, each backend's version (torch
with the CPU capability it dispatched to) and the reference data used. Figures differ by any
of these, so every report carries them."""
from __future__ import annotations

import hashlib
import platform
from collections.abc import Sequence

from .. import __version__
from ..results import AccuracyResult, DriftResult, Result, SweepResult


def _reference_digest() -> str | None:
    from ..reference import store

    try:
        return hashlib.sha256((store.default_directory() / store.MANIFEST).read_bytes()
                              ).hexdigest()[:16]
    except OSError:
        return None


def kernel_tiers(results: Sequence[Result]) -> dict[str, str]:
    """backend -> the kernel tier its results were computed on (where it has tiers)."""
    return {r.identity.backend: r.identity.kernel_tier for r in results
            if not isinstance(r, DriftResult) and r.identity.kernel_tier}


def describe(results: Sequence[Result]) -> dict:
    backends: dict[str, str] = {}
    for r in results:
        if isinstance(r, AccuracyResult | SweepResult) and r.identity.backend_version:
            backends.setdefault(r.identity.backend, r.identity.backend_version)
    return {"gelucheck": __version__, "python": platform.python_version(),
            "platform": platform.platform(), "machine": platform.machine(),
            "backends": backends, "kernel_tiers": kernel_tiers(results),
            "reference_manifest_sha256": _reference_digest()}


def one_line(env: dict) -> str:
    parts = [f"gelucheck {env['gelucheck']}", f"Python {env['python']}", env["platform"]]
    parts += [f"{name} {version}" for name, version in env["backends"].items()]
    if env.get("reference_manifest_sha256"):
        parts.append(f"reference manifest {env['reference_manifest_sha256']}")
    return " · ".join(parts)

"""Results per CPU dispatch level: torch picks its kernels by ATEN_CPU_CAPABILITY (default,
avx2, avx512 on x86), and the oneDNN kernels it hands some tensors to (exact GELU in float32
and bfloat16: docs/design.md, Consistency across call paths) by ONEDNN_MAX_CPU_ISA, each read
once at start, so each level is measured in a process of its own (with its own inductor
cache: backends.tensors.torch_compile), its results labelled with the level, and the outputs
of each level compared bit for bit with those of the default one - a path of the consistency
check like any other."""
from __future__ import annotations

import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np

from . import tiers
from .checks import reference_data
from .checks.consistency import EXAMPLES
from .errors import UsageError
from .formats import get_format
from .functions import get_function
from .results import AccuracyResult, ConsistencyResult, DriftResult, Identity, PathFigures
from .ulp import Exact, ulp_error

DEFAULT = "default"
LEVELS = ("default", "avx2", "avx512")


def environment(level: str) -> dict[str, str]:
    """This process's environment with torch's, oneDNN's, MKL's and XLA's kernels capped at
    ``level`` (tiers.PRESETS), or uncapped for the default."""
    return tiers.environment(tiers.NATIVE if level == DEFAULT else level)


def _capability(level: str) -> str | None:
    env = environment(level)
    done = subprocess.run([sys.executable, "-c", "import torch; print(torch.backends.cpu."
                           "get_cpu_capability())"], capture_output=True, text=True, env=env)
    return done.stdout.strip().lower() if done.returncode == 0 else None


def check_levels(levels: list[str]) -> list[str]:
    """The levels asked for, each one this machine and torch run as asked; else an error
    naming the ones they do."""
    for level in levels:
        if level not in LEVELS:
            raise UsageError(f"unknown CPU capability {level!r}; valid choices: "
                             f"{', '.join(LEVELS)}")
    # one process (importing torch) per level asked for; all of them only to name the valid
    # ones in a refusal
    bad = [lv for lv in levels if lv != DEFAULT and _capability(lv) != lv]
    if bad:
        valid = [DEFAULT] + [lv for lv in LEVELS[1:] if lv not in bad and _capability(lv) == lv]
        raise UsageError(f"CPU capability {', '.join(bad)} is not supported here; valid "
                         f"choices: {', '.join(valid)}")
    return levels


def measure(argv: list[str], levels: list[str]) -> list:
    """Run ``gelucheck <argv>`` once per level in a process of its own; the results of every
    level, labelled ``backend@level``, then one consistency result per case that compares
    each level's outputs with the default level's."""
    from .report import jsonio

    per_level, outputs = {}, {}
    with tempfile.TemporaryDirectory(prefix="gelucheck-levels-") as folder:
        for level in levels:
            env = environment(level)
            json_path, npz_path = Path(folder, f"{level}.json"), Path(folder, f"{level}.npz")
            done = subprocess.run([sys.executable, "-m", "gelucheck", *argv, "--no-progress",
                                   "--json", str(json_path), "--keep-outputs", str(npz_path)],
                                  env=env, capture_output=True, text=True)
            if not json_path.exists():
                raise UsageError(f"the run at CPU capability {level} failed (exit "
                                 f"{done.returncode}): {done.stderr.strip()[-500:]}")
            per_level[level] = jsonio.read(json_path)
            with np.load(npz_path, allow_pickle=False) as npz:
                outputs[level] = {k: npz[k] for k in npz.files}
    results = []
    for level, rs in per_level.items():
        results += [_label(r, level) for r in rs]
    return results + _compare_levels(per_level, outputs, levels)


def _compare_levels(per_level: dict, outputs: dict, levels: list[str]) -> list:
    """Per case, each level's outputs against the first level's: how many differ, by how
    much, and each level's own max ulp error (as it measured it) beside the first's."""
    measured = {(level, r.identity.id, r.identity.function, r.identity.dtype): r.figures
                for level, rs in per_level.items() for r in rs
                if isinstance(r, AccuracyResult) and r.figures is not None}
    base = levels[0]
    results = []
    for key, y0 in outputs[base].items():
        impl_id, function, dtype = key.split("|")
        fmt = get_format(dtype)
        backend, _, name = impl_id.partition(":")
        found = ConsistencyResult(Identity(backend, name, function, dtype))
        own = measured.get((base, impl_id, function, dtype))
        found.bulk_max_ulp = own.max_ulp if own else None
        tab = reference_data.table(fmt, get_function(function))
        y0f = y0.view(fmt.dtype)
        a = y0f.astype(np.float64)
        base_exact = Exact(a, np.copysign(0.0, a))  # y0 itself: a zero residual, signed
        stored = len(y0f) == len(tab.x)  # the outputs of the stored inputs, in order
        if stored:  # the figures the examples name, against the reference: once per case
            exact = reference_data.exact(tab, get_function(function))
            bulk_err = ulp_error(y0f, exact, fmt)
        for level in levels[1:]:
            y = outputs[level].get(key)
            if y is None:
                continue
            y = y.view(fmt.dtype)
            differ = fmt.bits_of(y) != fmt.bits_of(y0f)
            between = ulp_error(y, base_exact, fmt)
            at_level = measured.get((level, impl_id, function, dtype))
            idx = np.flatnonzero(differ)
            worst = idx[np.argsort(-np.nan_to_num(between[idx], posinf=np.inf), kind="stable")]
            examples = []
            if stored and len(y) == len(tab.x):
                path_err = ulp_error(y, exact, fmt)
                examples = [{"x": float(tab.x[i]), "x_hex": fmt.hex(tab.x[i]),
                             "bulk": float(y0f[i]), "path": float(y[i]),
                             "bulk_ulp": float(bulk_err[i]), "path_ulp": float(path_err[i])}
                            for i in worst[:EXAMPLES]]
            found.paths.append(PathFigures(
                f"level {level} vs {base}", len(y), n_differ=int(differ.sum()),
                max_ulp_difference=float(np.max(between[differ])) if differ.any() else 0.0,
                max_ulp=at_level.max_ulp if at_level else None, examples=examples))
        results.append(found)
    return results


def _label(result, level: str):
    if isinstance(result, DriftResult):
        return replace(result, backend=f"{result.backend}@{level}")
    return replace(result, identity=replace(result.identity,
                                            backend=f"{result.identity.backend}@{level}"))


def save_outputs(results: list, path: str) -> None:
    """The outputs each accuracy result kept, by implementation|function|dtype, as bits."""
    arrays = {}
    for r in results:
        if isinstance(r, AccuracyResult) and r.outputs is not None:
            fmt = get_format(r.identity.dtype)
            arrays[f"{r.identity.id}|{r.identity.function}|{fmt.name}"] = fmt.bits_of(r.outputs)
    np.savez(path, **arrays)  # type: ignore[arg-type]  # (NumPy's stub: **kwds vs allow_pickle)

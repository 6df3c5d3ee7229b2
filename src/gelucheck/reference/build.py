"""``gelucheck reference build``: compute the reference data in parallel and write it."""
from __future__ import annotations

import csv
import multiprocessing
import platform
import sys
import time
from pathlib import Path

import mpmath
import numpy as np

from ..errors import ReferenceDataError
from ..formats import FLOAT64, FORMATS, Format, get_format
from ..functions import FUNCTIONS, Function, get_function
from ..progress import bar as progress_bar
from . import arbref, mpref, store
from .inputs import reference_inputs
from .plans import GELU_FAMILY, InputPlan

CHUNK = 1024
SAMPLE_CSV = "sample.csv"
REBUILD_COMMAND = "gelucheck reference build"


def evaluate_chunk(args: tuple[str, np.ndarray, tuple[str, ...]]) -> dict[str, np.ndarray]:
    """The functions named, correctly rounded, at the inputs of one chunk (runs in a worker)."""
    fmt_name, x_bits, functions = args
    fmt = get_format(fmt_name)
    xs = [float(v) for v in fmt.from_bits(x_bits)]
    out: dict[str, np.ndarray] = {}
    for fn in functions:
        results = [mpref.correctly_rounded(fn, x, fmt) for x in xs]
        out[f"{fn}.rounded"] = np.array([r.bits for r in results], dtype=fmt.uint)
        out[f"{fn}.exact"] = FLOAT64.from_bits(
            np.array([r.float64_bits for r in results], dtype=np.uint64))
        out[f"{fn}.residual"] = np.array([r.residual for r in results], dtype=np.float64)
    return out


def compute_table(fmt: Format, x: np.ndarray, workers: int, progress: bool = True,
                  label: str | None = None, plan: str | Function | InputPlan = GELU_FAMILY,
                  functions: list[Function] | None = None) -> store.Table:
    """The plan's functions (or those named) at the inputs x, correctly rounded."""
    plan = store.plan_of(plan)
    names = tuple(f.name for f in (functions or store.members(plan)))
    bits = fmt.bits_of(x)
    chunks = [(fmt.name, bits[i:i + CHUNK], names) for i in range(0, len(bits), CHUNK)]
    bar = progress_bar(len(bits), label or f"reference {fmt.name}", progress, unit="input")
    parts = []
    if workers <= 1:
        for chunk in chunks:
            parts.append(evaluate_chunk(chunk))
            bar.update(len(chunk[1]))
    else:
        with multiprocessing.get_context("spawn").Pool(workers) as pool:
            for chunk, part in zip(chunks, pool.imap(evaluate_chunk, chunks)):
                parts.append(part)
                bar.update(len(chunk[1]))
    bar.close()
    arrays = {"x": bits.copy()}
    for name in (f"{fn}.{field}" for fn in names for field in store.FIELDS):
        arrays[name] = np.concatenate([p[name] for p in parts]) if parts else np.zeros(0)
    return store.Table(fmt, plan, arrays)


def provenance() -> dict:
    return {
        "mpmath": mpmath.__version__,
        "python-flint": arbref.version(),
        "numpy": np.__version__,
        "python": platform.python_version(),
        "working_precision_bits": {"start": mpref.START_PRECISION, "max": mpref.MAX_PRECISION,
                                   "assumed_error_bits_lost": mpref.ERROR_BITS_LOST},
        "command": REBUILD_COMMAND,
    }


def build(dtypes: list[str] | None = None, workers: int | None = None,
          directory: Path | None = None, progress: bool = True, log=sys.stderr,
          functions: list[str] | None = None) -> dict:
    """Rebuild the named formats (all by default) of the named functions (all by default);
    returns {file: seconds}. Only the files of the functions named are written (and their
    plans' inputs, where those are missing or changed): every other file stays as it is."""
    directory = Path(directory or store.default_directory())
    formats = [get_format(d) for d in (dtypes or FORMATS)]
    chosen = [get_function(f) for f in functions] if functions else list(FUNCTIONS.values())
    workers = workers or multiprocessing.cpu_count()
    try:
        manifest = store.read_manifest(directory)
    except ReferenceDataError:
        manifest = {"files": {}}
    if manifest.get("format_version") != store.FORMAT_VERSION:
        manifest = {"files": {}}  # the old layout: every file is rewritten
    files = manifest.setdefault("files", {})
    timings = {}
    for fmt in formats:
        for plan, wanted in store.by_plan(chosen):
            start = time.perf_counter()
            x = reference_inputs(fmt, plan)
            bits = fmt.bits_of(x)
            x_rel = store.inputs_file(fmt, plan)
            if _stored_inputs(directory, x_rel, files) != bits.tobytes():
                files[x_rel] = store.write_inputs(fmt, plan, bits, directory)
                stale = [f.name for f in store.members(plan) if f not in wanted
                         and files.get(store.function_file(fmt, f))]
                if stale:
                    print(f"{x_rel}: new inputs; rebuild {', '.join(stale)} too "
                          f"(`{store.REBUILD} --dtype {fmt.name}`)", file=log)
            table = compute_table(fmt, x, workers, progress, plan=plan, functions=wanted,
                                  label=f"reference {fmt.name} {plan.name}")
            for function in wanted:
                files[store.function_file(fmt, function)] = store.write_function(
                    table, function, files[x_rel], directory)
            seconds = time.perf_counter() - start
            timings[f"{fmt.name}/{plan.name}"] = seconds
            print(f"{fmt.name}: {', '.join(f.name for f in wanted)} at {len(table)} inputs in "
                  f"{seconds:.1f}s", file=log)
    manifest.update(provenance())
    manifest["format_version"] = store.FORMAT_VERSION
    store.write_manifest(manifest, directory)
    write_sample(directory)
    return timings


def _stored_inputs(directory: Path, relative: str, files: dict) -> bytes | None:
    """The stored inputs' bits, where the file is there and matches its manifest entry."""
    if relative not in files:
        return None
    try:
        return store.read_arrays(directory, relative, files[relative], store.REBUILD)["x"].tobytes()
    except (ReferenceDataError, KeyError):
        return None


def write_sample(directory: Path, per_format: int = 40) -> None:
    """A small human-readable excerpt of the stored data, for people, never read by code."""
    rows = []
    for name, plan in ((n, p) for n in FORMATS for p in store.plans()):
        try:
            table = store.load(name, plan, directory, checked=False)
        except ReferenceDataError:
            continue
        fmt = table.fmt
        picks = np.unique(np.linspace(0, len(table) - 1, per_format).astype(int))
        for i in picks:
            x = table.x[i]
            for fn in (f.name for f in table.functions):
                rounded = table.rounded(fn)[i]
                rows.append([fmt.name, repr(float(x)), fmt.hex(x), fn, repr(float(rounded)),
                             fmt.hex(rounded), repr(float(table.exact(fn)[i])),
                             f"{table.residual(fn)[i]:+.6f}"])
    with open(directory / SAMPLE_CSV, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["dtype", "x", "x_hex", "function", "correctly_rounded",
                         "correctly_rounded_hex", "exact_as_float64", "residual_ulps"])
        writer.writerows(rows)

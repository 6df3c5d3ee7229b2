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
from ..functions import FUNCTIONS
from ..progress import bar as progress_bar
from . import arbref, mpref, store
from .inputs import reference_inputs

CHUNK = 1024
SAMPLE_CSV = "sample.csv"
REBUILD_COMMAND = "gelucheck reference build"


def evaluate_chunk(args: tuple[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Every function, correctly rounded, at the inputs of one chunk (runs in a worker)."""
    fmt_name, x_bits = args
    fmt = get_format(fmt_name)
    xs = [float(v) for v in fmt.from_bits(x_bits)]
    out: dict[str, np.ndarray] = {}
    for fn in FUNCTIONS:
        results = [mpref.correctly_rounded(fn, x, fmt) for x in xs]
        out[f"{fn}.rounded"] = np.array([r.bits for r in results], dtype=fmt.uint)
        out[f"{fn}.exact"] = FLOAT64.from_bits(
            np.array([r.float64_bits for r in results], dtype=np.uint64))
        out[f"{fn}.residual"] = np.array([r.residual for r in results], dtype=np.float64)
    return out


def compute_table(fmt: Format, x: np.ndarray, workers: int, progress: bool = True,
                  label: str | None = None) -> store.Table:
    bits = fmt.bits_of(x)
    chunks = [(fmt.name, bits[i:i + CHUNK]) for i in range(0, len(bits), CHUNK)]
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
    for name in store.array_names()[1:]:
        arrays[name] = np.concatenate([p[name] for p in parts]) if parts else np.zeros(0)
    return store.Table(fmt, arrays)


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
          directory: Path | None = None, progress: bool = True, log=sys.stderr) -> dict:
    """Rebuild the named formats (all by default); returns {format: seconds}."""
    directory = Path(directory or store.default_directory())
    formats = [get_format(d) for d in (dtypes or FORMATS)]
    workers = workers or multiprocessing.cpu_count()
    try:
        manifest = store.read_manifest(directory)
    except ReferenceDataError:
        manifest = {"files": {}}
    timings = {}
    for fmt in formats:
        start = time.perf_counter()
        table = compute_table(fmt, reference_inputs(fmt), workers, progress)
        timings[fmt.name] = time.perf_counter() - start
        manifest["files"][store.file_name(fmt)] = store.write_table(table, directory)
        print(f"{fmt.name}: {len(table)} inputs in {timings[fmt.name]:.1f}s", file=log)
    manifest.update(provenance())
    manifest["format_version"] = 1
    store.write_manifest(manifest, directory)
    write_sample(directory)
    return timings


def write_sample(directory: Path, per_format: int = 40) -> None:
    """A small human-readable excerpt of the stored data, for people, never read by code."""
    rows = []
    for name in FORMATS:
        try:
            table = store.load(name, directory, checked=False)
        except ReferenceDataError:
            continue
        fmt = table.fmt
        picks = np.unique(np.linspace(0, len(table) - 1, per_format).astype(int))
        for i in picks:
            x = table.x[i]
            for fn in FUNCTIONS:
                rounded = table.rounded(fn)[i]
                rows.append([fmt.name, repr(float(x)), fmt.hex(x), fn, repr(float(rounded)),
                             fmt.hex(rounded), repr(float(table.exact(fn)[i])),
                             f"{table.residual(fn)[i]:+.6f}"])
    with open(directory / SAMPLE_CSV, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["dtype", "x", "x_hex", "function", "correctly_rounded",
                         "correctly_rounded_hex", "exact_as_float64", "residual_ulps"])
        writer.writerows(rows)

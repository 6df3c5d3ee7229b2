"""``gelucheck sweep``: every float32 encoding in a range, in tasks spread over processes,
checkpointed per task so that an interrupted sweep resumes where it stopped."""
from __future__ import annotations

import ctypes
import json
import multiprocessing
import os
import time
from pathlib import Path

from ..backends import Implementation, find, load_user
from ..errors import UsageError
from ..formats import FLOAT32, Format
from ..functions import Function, get_function
from ..progress import Progress
from ..results import SweepResult
from .chunk import evaluate, finite_ranges, hex32
from .stats import merge_all, results

TASK = 1 << 24  # encodings per task: 256 tasks for all of float32, each a checkpoint
FORMAT_VERSION = 1


class SweepError(UsageError):
    """A sweep that cannot run as asked, with the reason."""


def parse_range(text: str | None) -> tuple[int, int]:
    if not text:
        return 0, 1 << 32
    try:
        a, b = text.split(":")
        start, stop = int(a, 16), int(b, 16)
    except ValueError:
        raise SweepError(f"--range {text!r}: expected START:STOP as float32 bit patterns in "
                         "hex, e.g. 0x3f800000:0x40000000 (STOP excluded)") from None
    if not 0 <= start < stop <= 1 << 32:
        raise SweepError(f"--range {text!r}: need 0 <= START < STOP <= 0x100000000")
    return start, stop


def check_dtype(fmt: Format) -> None:
    if fmt == FLOAT32:
        return
    if fmt.bits == 16:
        raise SweepError(f"--dtype {fmt.name}: its 65,536 encodings are all in the reference "
                         f"data already: use `gelucheck check --dtype {fmt.name}`")
    raise SweepError(f"--dtype {fmt.name}: 2^{fmt.bits} inputs cannot be swept; use "
                     f"`gelucheck check --dtype {fmt.name}` (a stratified sample) instead")


def tasks(start: int, stop: int) -> list[tuple[int, int]]:
    """[a, b) pieces of at most TASK finite encodings of one sign, aligned to TASK."""
    out = []
    for lo, hi in finite_ranges(start, stop):
        a = lo
        while a < hi:
            b = min((a // TASK + 1) * TASK, hi)
            out.append((a, b))
            a = b
    return out


def resolve(spec: dict) -> list[Implementation]:
    """Implementations from a picklable spec (workers rebuild them from it)."""
    if spec["kind"] == "user":
        return [load_user(spec["impl"], spec["function"], spec["framework"], spec["device"])]
    return find(spec["impl"], spec["function"])


def _tune_process() -> None:
    """Keep big temporaries in malloc's free lists rather than fresh mmaps: page faults on
    every numpy temporary cost more than the arithmetic (measured: 5x on this machine)."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-3, 1 << 28)  # M_MMAP_THRESHOLD
        libc.mallopt(-1, 1 << 30)  # M_TRIM_THRESHOLD
        libc.mallopt(-2, 1 << 28)  # M_TOP_PAD
    except (OSError, AttributeError):
        pass
    try:
        import torch

        torch.set_num_threads(1)  # one process per core already
    except ImportError:
        pass


_WORKER: dict = {}


def _init_worker(specs: list[dict], function: str) -> None:
    _tune_process()
    _WORKER["impls"] = [i for s in specs for i in resolve(s)]
    _WORKER["function"] = get_function(function)


def _run_task(task: tuple[int, int]) -> dict:
    return evaluate(_WORKER["impls"], _WORKER["function"], *task)


class Checkpoint:
    """One JSON file per finished task, beside a meta.json that says which sweep it is."""

    def __init__(self, directory: str | Path | None, meta: dict):
        self.directory = Path(directory) if directory else None
        self.meta = meta
        if self.directory is None:
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self.directory / "meta.json"
        if path.exists():
            old = json.loads(path.read_text())
            differ = [k for k in meta if old.get(k) != meta[k]]
            if differ:
                raise SweepError(
                    f"checkpoint {self.directory} belongs to a different sweep ("
                    + "; ".join(f"{k}: {old.get(k)!r} there, {meta[k]!r} here" for k in differ)
                    + "): use another --checkpoint folder")
        else:
            path.write_text(json.dumps(meta, indent=1))

    def _path(self, task: tuple[int, int]) -> Path:
        return self.directory / f"task_{task[0]:08x}_{task[1]:08x}.json"

    def done(self, task: tuple[int, int]) -> dict | None:
        if self.directory is None or not self._path(task).exists():
            return None
        return json.loads(self._path(task).read_text())

    def save(self, result: dict) -> None:
        if self.directory is None:
            return
        path = self._path((result["start"], result["stop"]))
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(result))
        os.replace(tmp, path)  # atomic: a killed sweep leaves whole files or none


def sweep(specs: list[dict], function: Function, span: tuple[int, int], workers: int = 1,
          checkpoint: str | Path | None = None, progress: bool = True) -> list[SweepResult]:
    function = get_function(function)
    impls = [i for s in specs for i in resolve(s)]
    if not impls:
        raise SweepError(f"no implementation of {function} to sweep in {specs}")
    meta = {"format_version": FORMAT_VERSION, "function": function.name,
            "implementations": [f"{i.id}/{i.function.name}" for i in impls],
            "range": [hex32(span[0]), hex32(span[1])], "task": TASK}
    store = Checkpoint(checkpoint, meta)
    todo = tasks(*span)
    finished = [r for r in (store.done(t) for t in todo) if r is not None]
    pending = [t for t in todo if store.done(t) is None]
    bar = Progress(sum(b - a for a, b in todo), f"sweep {function.name}", enabled=progress)
    bar.advance(sum(r["stop"] - r["start"] for r in finished))
    start = time.perf_counter()
    if workers <= 1:
        _init_worker(specs, function.name)
        for t in pending:
            result = _run_task(t)
            store.save(result)
            finished.append(result)
            bar.advance(t[1] - t[0])
    else:
        ctx = multiprocessing.get_context("spawn")
        with ctx.Pool(workers, initializer=_init_worker, initargs=(specs, function.name)) as pool:
            for result in pool.imap_unordered(_run_task, pending):
                store.save(result)
                finished.append(result)
                bar.advance(result["stop"] - result["start"])
    bar.close()
    merged = merge_all(finished)
    out = results(merged, impls, span)
    for r in out:
        r.wall_s = time.perf_counter() - start
    return out

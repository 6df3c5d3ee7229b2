"""Where the search's rounds run: in this process, on a pool of local processes, or on a
Dask cluster (the sweep's engines: sweep/runner.py's pool, sweep/cluster.py's client). A
round's cells go out in chunks; each worker rebuilds the implementation from its spec and
keeps its own reference (its cache of expansions); results come back in the round's order,
so the search is the same with any number of workers."""
from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from typing import Any

from ..backends import Implementation
from ..functions import get_function
from ..sweep.reference import SweepError
from ..sweep.worker import (
    Meta,
    Spec,
    Threads,
    _meta,
    _restore_threads,
    _torch_on_one_thread,
    _tune_process,
    check_versions,
    preloads,
    resolve,
)
from .cells import Cell
from .reference import Reference
from .task import CellResult, evaluate

CHUNKS_PER_WORKER = 4  # a round in this many chunks per worker: the last ones balance
ALONE = 1 << 16  # a cell of this many inputs searched whole is a task of its own

_STATE: dict[str, Any] = {}  # per process: the implementation and reference of one search


def _prepare(spec: Spec, function: str, meta: Meta | None = None
             ) -> tuple[Implementation, Reference]:
    key = json.dumps([spec, function], sort_keys=True)
    if _STATE.get("key") != key:
        (impl,) = resolve(spec)
        if meta is not None:
            check_versions([impl], meta, "search")
        _STATE.update(key=key, impl=impl, reference=Reference(get_function(function)))
    return _STATE["impl"], _STATE["reference"]


def _init_worker(spec: Spec, function: str, env: dict[str, str] | None = None) -> None:
    if env is not None:  # forked from the fork server, which holds its first user's
        os.environ.clear()
        os.environ.update(env)
    _prepared(spec, function, _tune_process())


def _prepared(spec: Spec, function: str, threads: Threads) -> Threads:
    """The search's implementation prepared in this process, tuned as a worker already
    (``threads``: what _tune_process changed), then torch's threads set where preparing it
    loaded torch (as worker.tuned does for a sweep); returns what the tuning changed."""
    _prepare(spec, function)
    return _torch_on_one_thread(threads)


def run_chunk(spec: Spec, function: str, cells: list[Cell], samples: int | None, seed: int,
              meta: Meta | None = None) -> list[CellResult]:
    """One chunk of a round, on whichever worker: pure, as evaluate is."""
    impl, reference = _prepare(spec, function, meta)
    return evaluate(impl, reference, cells, samples, seed)


def _chunks(cells: list[Cell], workers: int, whole: bool) -> list[list[Cell]]:
    """A round's cells in chunks: a large cell searched whole is a chunk of its own (its
    inputs outweigh a task's cost, and 20 cells in 7 chunks of 3 leave a worker idle at the
    end); others CHUNKS_PER_WORKER chunks per worker."""
    alone = whole and all(c.size >= ALONE for c in cells)
    size = 1 if alone else max(1, -(-len(cells) // (workers * CHUNKS_PER_WORKER)))
    return [cells[i:i + size] for i in range(0, len(cells), size)]


class Engine:
    """Runs a search's rounds (strategy.Runner); ``overhead_s`` is the workers' time outside
    the cells' own evaluation (dispatch, transfer, waiting for the last chunk)."""

    def __init__(self, name: str, workers: int, submit, dashboard: str | None = None):
        self.name, self.workers, self._submit, self.dashboard = name, workers, submit, dashboard
        self.tasks = 0
        self.wall_s = 0.0
        self.busy_s = 0.0

    def __call__(self, cells: list[Cell], samples: int | None, seed: int) -> list[CellResult]:
        clock = time.perf_counter()
        chunks = _chunks(cells, self.workers, samples is None)
        results = [r for chunk in self._submit(chunks, samples, seed) for r in chunk]
        self.tasks += len(chunks)
        self.wall_s += time.perf_counter() - clock
        self.busy_s += sum(r.implementation_s + r.reference_s for r in results)
        return results

    def describe(self) -> dict:
        return {"name": self.name, "workers": self.workers, "tasks": self.tasks,
                "overhead_s": max(0.0, self.wall_s * self.workers - self.busy_s)}


@contextmanager
def engine(spec: Spec, impl: Implementation, workers: int, name: str = "local",
           scheduler: str | None = None) -> Iterator[Engine]:
    """The engine a search of ``impl`` (which workers rebuild from ``spec``) runs on: this
    process (one local worker), a local pool, or Dask (``name`` dask: a local cluster of
    ``workers`` processes, or the one at ``scheduler``)."""
    function = impl.function.name
    if name == "dask" or scheduler is not None:
        with _dask(spec, impl, workers, scheduler) as e:
            yield e
        return
    from ..sweep.runner import pool_of

    with pool_of(workers, _init_worker, (spec, function), preloads([spec])) as pool:
        if pool is None:
            threads = _tune_process()
            try:
                threads = _prepared(spec, function, threads)
                yield Engine("here", 1, lambda chunks, samples, seed: [
                    run_chunk(spec, function, c, samples, seed) for c in chunks])
            finally:
                _restore_threads(threads)
            return

        def submit(chunks, samples, seed):
            futures = [pool.submit(run_chunk, spec, function, c, samples, seed)
                       for c in chunks]
            try:
                return [f.result() for f in futures]
            except BrokenProcessPool:
                raise SweepError("a search worker process died (killed, out of memory, or "
                                 "crashed in the implementation); rerun with --checkpoint "
                                 "to keep the finished rounds") from None

        yield Engine("local", workers, submit)


@contextmanager
def _dask(spec: Spec, impl: Implementation, workers: int, scheduler: str | None
          ) -> Iterator[Engine]:
    from ..sweep.cluster import _client

    function = impl.function.name
    meta = _meta(impl.function, [impl], (0, 0))
    client, cluster = _client(scheduler, workers)
    try:
        held = client.scheduler_info().get("workers", {}).values()
        count = max(1, sum(int(w.get("nthreads", 1)) for w in held))

        def submit(chunks, samples, seed):
            futures = [client.submit(run_chunk, spec, function, c, samples, seed, meta,
                                     pure=False) for c in chunks]
            return client.gather(futures)

        served = "dashboard" in client.scheduler_info().get("services", {})
        yield Engine("dask", count, submit, client.dashboard_link if served else None)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()

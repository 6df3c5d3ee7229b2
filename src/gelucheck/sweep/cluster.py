"""A sweep's tasks on a dask.distributed cluster: one that runs already (``--scheduler
ADDRESS``: a ``dask scheduler`` with its ``dask worker``s, or the workers dask-jobqueue starts
on SLURM or PBS, or dask-kubernetes on Kubernetes - Dask's own tools, docs/commands/sweep.md),
or a local one (``--engine dask``). Written here, not by hand: Dask schedules, retries the
tasks a lost worker held, and serves a dashboard; gelucheck only says what a task is.

A job (a task, or a task and its mirror: runner.jobs) is a pure function of (what to sweep,
the function, its ranges of encodings, the versions the sweep was planned with): the same
bytes whichever worker runs it and however often, so a retried job changes nothing. A worker
whose gelucheck, library versions or kernel tier differ from the planning process's refuses
the job by name.
"""
from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from typing import Any  # (Dask's client and cluster: distributed loads when used)

from ..backends import Implementation
from ..functions import Function, get_function
from .reference import SweepError
from .stats import ChunkStats
from .worker import _WORKER, Job, Meta, Spec, _init_worker, _meta, _run_job, check_versions

# per worker process: the sweep its implementations were resolved for
_READY: dict[str, tuple[str, str]] = {}


def run_job(specs: list[Spec], function: str, job: Job, meta: Meta) -> list[ChunkStats]:
    """One job, on a worker: the implementations resolved once per process and sweep,
    checked against the versions the sweep was planned with, then each task evaluated."""
    key = (json.dumps(specs, sort_keys=True), function)
    if _READY.get("key") != key:
        _init_worker(specs, function)
        check_versions(_WORKER["impls"], meta)
        _READY["key"] = key
    return _run_job(job)


def _client(scheduler: str | None, workers: int) -> tuple[Any, Any]:
    """(a Dask client, the local cluster it owns or None) for ``scheduler``, else a local
    cluster of ``workers`` processes with one thread each."""
    from distributed import Client, LocalCluster

    if scheduler is not None:
        try:
            return Client(scheduler, timeout="10s"), None
        except OSError as exc:
            raise SweepError(f"--scheduler {scheduler}: no Dask scheduler answers there "
                             f"({exc})") from None
    try:
        import bokeh  # noqa: F401 - Dask's dashboard needs it
        dashboard: str | None = "127.0.0.1:0"
    except ImportError:
        dashboard = None
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                           host="127.0.0.1", dashboard_address=dashboard,
                           silence_logs=logging.ERROR)
    return Client(cluster), cluster


def run(specs: list[Spec], function: str, pending: list[Job], meta: Meta,
        done: Callable[[ChunkStats], None], scheduler: str | None, workers: int,
        say: Callable[[str], None]) -> int:
    """Every pending job on the cluster, ``done`` called with each task's result as its
    job's come; returns how many worker threads the cluster had at the end."""
    try:
        from distributed import as_completed
    except ImportError:
        raise SweepError("the Dask engine needs dask.distributed: pip install "
                         "'gelucheck[cluster]'") from None
    client, cluster = _client(scheduler, workers)
    try:
        served = "dashboard" in client.scheduler_info().get("services", {})
        say(f"Dask scheduler {client.scheduler.address}; dashboard "
            f"{client.dashboard_link if served else 'off (it needs bokeh)'}")
        futures = [client.submit(run_job, specs, function, job, meta, pure=False,
                                 key=f"gelucheck-sweep-{function}-{job[0][0]:09x}-{os.getpid()}")
                   for job in pending]
        for future in as_completed(futures):
            for result in future.result():
                done(result)
        held = client.scheduler_info().get("workers", {}).values()
        return sum(int(w.get("nthreads", 1)) for w in held)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def spec_of(impl: Implementation, framework: str = "numpy") -> Spec:
    """What a worker rebuilds ``impl`` from (worker.resolve): a backend's by its id, a user's
    callable by its MOD:FN and how it is called."""
    if impl.backend == "user":
        return {"kind": "user", "impl": impl.name, "function": impl.function.name,
                "framework": framework, "device": impl.device}
    return {"kind": "builtin", "impl": impl.id, "function": impl.function.name}


def evaluate_on(scheduler: str, impls: list[Implementation], function: str | Function,
                task: tuple[int, int],
                framework: str = "numpy") -> ChunkStats:
    """One task of ``impls`` on the Dask cluster at ``scheduler`` (the pytest plugin's
    exhaustive items with --gelucheck-scheduler): what chunk.evaluate gives here."""
    function = get_function(function)
    found: list[ChunkStats] = []
    run([spec_of(i, framework) for i in impls], function.name, [(task,)],
        _meta(function, impls, task), found.append, scheduler, 1, say=lambda line: None)
    return found[0]

"""What a sweep's worker process does, whichever engine runs it (the local pool of runner.py,
or Dask: cluster.py): the implementations rebuilt from picklable specs once per process, the
process tuned, one task evaluated; and what makes two sweeps the same (their versions)."""
from __future__ import annotations

import ctypes
import os
import socket
import sys
from typing import Any, NamedTuple, TypedDict

from .. import __version__
from ..backends import (
    FORK_SAFE_IMPORTS,
    Implementation,
    backend_version,
    find,
    get_backend,
    load_user,
    threads,
)
from ..functions import Function, get_function
from .chunk import evaluate_job, hex32
from .proofs import warm_proofs
from .reference import SweepError, warm
from .stats import ChunkStats, key_of

TASK = 1 << 24  # encodings per task: 256 tasks for all of float32, each a checkpoint
FORMAT_VERSION = 2  # 2: typed statistics (stats.ChunkStats.to_data)


class Spec(TypedDict, total=False):
    """What a worker rebuilds an implementation from (picklable, and JSON for Dask): a
    backend's, by its id, or a user's callable, by its MOD:FN and how it is called."""

    kind: str  # "builtin" or "user"
    impl: str
    function: str
    framework: str
    device: str
    autograd: bool


Meta = dict[str, Any]  # _meta's: what makes two sweeps the same
Task = tuple[int, int]  # [start, stop) of encodings: a checkpoint's unit
Job = tuple[Task, ...]  # what a worker runs at once: a task, or a task and its mirror


def resolve(spec: Spec) -> list[Implementation]:
    """Implementations from a picklable spec (workers rebuild them from it): a user's
    callable, or a backend's implementations of the function - one (``backend:name``) or
    all (``backend``). An unknown or unavailable one is a usage error naming the choices."""
    if spec["kind"] == "user":
        return [load_user(spec["impl"], spec["function"], spec["framework"], spec["device"],
                          autograd=spec.get("autograd", False))]
    name, _, impl = spec["impl"].partition(":")
    backend = get_backend(name)  # an unknown name: a usage error with the valid ones
    if not backend.available:
        raise SweepError(f"backend {name} is unavailable: {backend.reason}")
    if impl:
        return find(spec["impl"], spec["function"])
    function = get_function(spec["function"])
    found = sorted((i for i in backend.implementations if i.function == function),
                   key=lambda i: i.name)
    if not found:
        offered = sorted({i.function.name for i in backend.implementations})
        raise SweepError(f"backend {name} has no {function.name}; it offers "
                         f"{', '.join(offered)}")
    return found


def preloads(specs: list[Spec]) -> list[str]:
    """What resolving ``specs`` imports that a fork server may import for its workers, each
    module once, in a fixed order."""
    return sorted({m for s in specs for m in _preload_of(s)})


def _preload_of(spec: Spec) -> tuple[str, ...]:
    """A backend's FORK_SAFE_IMPORTS; torch for a user's callable on torch tensors (what a
    user's callable imports itself is not known)."""
    if spec["kind"] == "user":
        return ("torch",) if spec.get("framework") == "torch" else ()
    return FORK_SAFE_IMPORTS.get(spec["impl"].partition(":")[0], ())


class Threads(NamedTuple):
    """What _tune_process changed, for _restore_threads: torch's thread count before (None
    without torch) and the other backends' setting (backends/threads.py)."""

    torch: int | None
    one_thread: bool


def _tune_process() -> Threads:
    """Keep big temporaries in malloc's free lists rather than fresh mmaps: page faults on
    every numpy temporary cost more than the arithmetic. And one thread for each library's
    kernels: there is one process per core already (torch's, where it is loaded, and the
    sessions and models ONNX Runtime and OpenVINO make from now on).
    Returns what it changed, for _restore_threads."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-3, 1 << 28)  # M_MMAP_THRESHOLD
        libc.mallopt(-1, 1 << 30)  # M_TRIM_THRESHOLD
        libc.mallopt(-2, 1 << 28)  # M_TOP_PAD
    except (OSError, AttributeError):
        pass
    one_thread = threads.set_one_thread(True)
    return _torch_on_one_thread(Threads(None, one_thread))


def _torch_on_one_thread(saved: Threads) -> Threads:
    """torch's kernels on one thread, where torch is loaded and _tune_process has not set it
    yet: ``saved`` with torch's count before. Not imported for it: a sweep of another
    library's implementations would pay for importing torch in every worker."""
    torch: Any = sys.modules.get("torch")
    if saved.torch is not None or torch is None:
        return saved
    before = int(torch.get_num_threads())
    torch.set_num_threads(1)
    return saved._replace(torch=before)


def _restore_threads(saved: Threads) -> None:
    """The threads as they were before this process ran a sweep's tasks itself."""
    threads.set_one_thread(saved.one_thread)
    if saved.torch is not None:
        import torch

        torch.set_num_threads(saved.torch)


_WORKER: dict[str, Any] = {}


def _init_worker(specs: list[Spec], function: str,
                 env: dict[str, str] | None = None) -> Threads:
    """This process made a sweep's worker (or the sweep's own, when it works alone): the
    implementations resolved, the compiled loops loaded. ``env``: the sweep's environment,
    for a worker forked from the fork server, which holds that of the process's first sweep
    (multiprocessing passes the import path and the working directory itself)."""
    if env is not None:
        os.environ.clear()
        os.environ.update(env)
    _WORKER["impls"], threads = tuned(specs)
    warm([function])  # loaded from the disk cache the parent filled, before any
    # block is timed
    warm_proofs()
    _WORKER["function"] = get_function(function)
    return threads


def tuned(specs: list[Spec]) -> tuple[list[Implementation], Threads]:
    """The implementations of ``specs``, resolved in this process tuned as a sweep's worker
    is (_tune_process before: the sessions ONNX Runtime makes take one thread; torch's
    threads after, where resolving them loaded it), and what the tuning changed."""
    saved = _tune_process()
    impls = [i for s in specs for i in resolve(s)]
    return impls, _torch_on_one_thread(saved)


def _run_job(job: Job) -> list[ChunkStats]:
    """Each task's statistics (runner.jobs)."""
    return evaluate_job(_WORKER["impls"], _WORKER["function"], job)


def check_versions(impls: list[Implementation], planned: Meta, work: str = "sweep") -> None:
    """Refuse, by name, a worker whose gelucheck, library versions or kernel tier differ
    from the planning process's: its figures would not be the same ``work``'s."""
    mine = _meta(impls[0].function, impls, (0, 0))
    for name in ("gelucheck", "implementations", "versions"):
        if mine[name] != planned[name]:
            raise SweepError(
                f"the worker on {socket.gethostname()} (pid {os.getpid()}) has {name} "
                f"{mine[name]}, where this {work} was planned with {planned[name]}: every "
                "worker needs the same gelucheck, libraries and kernel tier")


def _meta(function: Function, impls: list[Implementation], span: tuple[int, int]) -> Meta:
    """What makes two sweeps the same: their results may be merged only then."""
    return {"format_version": FORMAT_VERSION, "gelucheck": __version__,
            "function": function.name,
            "implementations": [key_of(i) for i in impls],
            "versions": [backend_version(i) for i in impls],
            "range": [hex32(span[0]), hex32(span[1])], "task": TASK}



"""``gelucheck sweep``: every float32 encoding in a range, in tasks spread over processes,
checkpointed per task so that an interrupted sweep resumes where it stopped."""
from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from multiprocessing import forkserver
from pathlib import Path

from ..formats import FLOAT32, Format
from ..functions import Function, get_function
from ..progress import bar as progress_bar
from ..results import SweepResult
from . import ENGINES
from .checkpoint import Checkpoint
from .chunk import finite_ranges
from .mirror import SIGN, mirror_of
from .reference import SweepError, spec, warm
from .stats import ChunkStats, merge_all, results
from .worker import (
    TASK,
    Job,
    Spec,
    Task,
    _init_worker,
    _meta,
    _restore_threads,
    _run_job,
    preloads,
    resolve,
)


def parse_range(text: str | None) -> tuple[int, int]:
    """START:STOP in hex (None: every encoding), refused unless it holds a finite input."""
    if text is None:
        return 0, 1 << 32
    try:
        a, b = text.split(":")
        start, stop = int(a, 16), int(b, 16)
    except ValueError:
        raise SweepError(f"--range {text!r}: expected START:STOP as float32 bit patterns in "
                         "hex, e.g. 0x3f800000:0x40000000 (STOP excluded)") from None
    if not 0 <= start < stop <= 1 << 32:
        raise SweepError(f"--range {text!r}: need 0 <= START < STOP <= 0x100000000")
    if not finite_ranges(start, stop):
        raise SweepError(f"--range {text!r} holds only inf and NaN encodings "
                         "(0x7f800000-0x7fffffff, 0xff800000-0xffffffff): nothing to measure")
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


def jobs(pending: list[Task], function: Function) -> list[Job]:
    """The tasks as the workers take them: a positive task with its negative mirror where the
    function's reference is mirrored (SweepSpec.mirrored: the negative blocks of an odd
    implementation then take the positive ones' figures, sweep/mirror.py) and both are to
    run; every other task alone. In the order of the encodings, each job at its first."""
    if not spec(function).mirrored:
        return [(t,) for t in pending]
    left = set(pending)
    out: list[Job] = []
    for task in sorted(pending):
        if task not in left:
            continue
        left.discard(task)
        if task[0] < SIGN and (mirror := mirror_of(task)) in left:
            left.discard(mirror)
            out.append((task, mirror))
        else:
            out.append((task,))
    return out


PRELOAD = "gelucheck.sweep.preload"


def _fork_server(modules: list[str]):
    """multiprocessing's fork server, started (it imports ``modules`` - worker.preloads of the
    sweep's implementations - and then sweep/preload.py from then on), or None where there is
    none. The first sweep's serves this process's later ones, whatever they sweep."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return None
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload([*modules, PRELOAD])
    forkserver.ensure_running()
    return ctx


def end_fork_server() -> None:
    """This process's fork server, if it started one, ended by SIGTERM rather than by its
    interpreter's teardown (torch's, numba's), which a pipeline reading the command's output
    waits for: the server holds the command's stdout. For the command line's exit (cli.run):
    a library's caller keeps its server for its later sweeps. multiprocessing names the pid
    only privately, hence getattr."""
    pid = getattr(getattr(forkserver, "_forkserver", None), "_forkserver_pid", None)
    if pid is not None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)


def start_fork_server(specs: list[Spec], span: tuple[int, int] | None, workers: int,
                      engine: str = "local", scheduler: str | None = None) -> None:
    """The fork server started, where a sweep of ``specs`` over ``span`` (a search: None)
    forks its workers from it (the local engine and no Dask scheduler, more than one worker
    and, for a sweep, more than one task): a caller starts it first, so that it imports while
    the caller checks the rest of its input and resolves the implementations; sweep calls it
    too."""
    if (workers > 1 and engine == "local" and scheduler is None
            and (span is None or len(tasks(*span)) > 1)):
        _fork_server(preloads(specs))


def _workers(count: int, specs: list[Spec], function: Function):
    """The sweep's pool of worker processes (pool_of)."""
    return pool_of(count, _init_worker, (specs, function.name), preloads(specs))


@contextmanager
def pool_of(count: int, initializer, initargs: tuple, modules: list[str]):
    """A pool of ``count`` worker processes (None for one: this process works alone), each
    made by ``initializer(*initargs, env)``, forked from the fork server (_fork_server, with
    ``modules`` preloaded: sweep starts it before it resolves the implementations),
    ready as the tasks are submitted. Where there is no fork server (Windows), spawned at once
    instead. On an error, Ctrl-C or when unused, the workers are stopped at once."""
    if count <= 1:
        yield None
        return
    others = set(multiprocessing.active_children())  # not ours to stop
    if (ctx := _fork_server(modules)) is not None:
        pool = ProcessPoolExecutor(count, mp_context=ctx, initializer=initializer,
                                   initargs=(*initargs, dict(os.environ)))
    else:
        pool = ProcessPoolExecutor(count, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=initializer, initargs=initargs)
        for _ in range(count):  # each submission spawns a worker: all of them now
            pool.submit(int)
    try:
        yield pool
    finally:
        # every result is in, or none is wanted: no waiting for the workers to wind down
        # (torch's teardown is slow). The executor's own thread reaps them (a join
        # here raced with it and left a reaped process listed as alive)
        for child in set(multiprocessing.active_children()) - others:
            child.terminate()
        pool.shutdown(wait=True, cancel_futures=True)


def _in_processes(pool: ProcessPoolExecutor, pending: list[Job], done) -> None:
    """Run the jobs over the worker processes, calling ``done`` with each task's result as
    its job's come. A worker that dies ends the run with an error (the finished tasks are
    kept)."""
    futures = [pool.submit(_run_job, job) for job in pending]
    try:
        for future in as_completed(futures):
            for result in future.result():
                done(result)
    except BrokenProcessPool:
        raise SweepError("a sweep worker process died (killed, out of memory, or crashed in "
                         "an implementation); the finished tasks are kept in --checkpoint, "
                         "if given: rerun with it to resume") from None


def sweep(specs: list[Spec], function: Function, span: tuple[int, int], workers: int = 1,
          checkpoint: str | Path | None = None, progress: bool = True, engine: str = "local",
          scheduler: str | None = None) -> list[SweepResult]:
    """The sweep's results; its tasks run here (one worker), over a local pool of processes
    (``engine`` "local"), or on Dask (``engine`` "dask": a local cluster of ``workers``, or the
    cluster at ``scheduler``)."""
    function = get_function(function)
    if workers < 1:
        raise SweepError(f"--workers {workers}: need at least 1")
    if engine not in ENGINES:
        raise SweepError(f"unknown engine {engine!r}; valid choices: {', '.join(ENGINES)}")
    if scheduler is not None and engine != "dask":
        raise SweepError(f"--scheduler {scheduler} runs the tasks on Dask: --engine {engine} "
                         "contradicts it")
    todo = tasks(*span)
    remote = scheduler is not None
    workers = workers if len(todo) > 1 or remote else 1  # a single task runs here
    start_fork_server(specs, span, workers, engine)  # importing while this process resolves
    # and loads the loops
    # an unknown or unavailable implementation refused before the loops compile (the first
    # time after install: seconds)
    impls = [i for s in specs for i in resolve(s)]
    if not impls:
        raise SweepError(f"no implementation of {function} to sweep in {specs}")
    compile_s = warm([function])  # compiled once, here, before the workers load them
    meta = _meta(function, impls, span)
    dask = engine == "dask" and (workers > 1 or remote)
    with _workers(1 if dask else workers, specs, function) as pool:
        store = Checkpoint(checkpoint, meta)
        saved = {t: store.done(t) for t in todo}
        finished = [r for r in saved.values() if r is not None]
        pending = [t for t, r in saved.items() if r is None]
        bar = progress_bar(sum(b - a for a, b in todo), f"sweep {function.name}", progress,
                           unit="input")
        bar.update(sum(r.stop - r.start for r in finished))
        start = time.perf_counter()
        computed: list[ChunkStats] = []  # this run's tasks

        def done(result: ChunkStats) -> None:
            store.save(result)
            finished.append(result)
            computed.append(result)
            bar.update(result.stop - result.start)

        planned = jobs(pending, function)
        if dask and pending:
            from . import cluster

            used = ("dask", cluster.run(specs, function.name, planned, meta, done, scheduler,
                                        workers,
                                        say=lambda line: bar.write(line, file=sys.stderr)))
        elif pool is None or len(planned) <= 1:
            used = ("here", 1)
            threads = _init_worker(specs, function.name)
            try:
                for job in planned:
                    for result in _run_job(job):
                        done(result)
            finally:  # a library's caller (the pytest plugin) keeps its torch as it was
                _restore_threads(threads)
        else:
            used = ("local", workers)
            _in_processes(pool, planned, done)
        ran = time.perf_counter() - start
    bar.close()
    merged = merge_all(finished)
    if merged is None:  # (tasks() of a span parse_range accepted is never empty)
        raise SweepError(f"no finite encoding in [{span[0]:#x}, {span[1]:#x})")
    out = results(merged, impls, span)
    wall = time.perf_counter() - start
    for r in out:
        r.wall_s = wall
        r.n_evaluated = sum(b - a for a, b in pending)  # this run's, not the checkpointed
        r.compile_s = compile_s if pending else None
        r.engine = _engine(used, ran, computed) if computed else None
    return out


def _engine(used: tuple[str, int], wall_s: float, computed: list[ChunkStats]) -> dict:
    """What running this run's tasks cost beyond the tasks themselves: the workers' wall time
    (each worker's, from the first submission to the last result) less the tasks' own."""
    name, workers = used
    spent = sum(c.task_s for c in computed)
    return {"name": name, "workers": workers, "tasks": len(computed),
            "overhead_s": max(workers * wall_s - spent, 0.0)}

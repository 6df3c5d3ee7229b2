"""A user's callable run in a child process: a call that does not return within the time
allowed, or a process that dies (a signal, an abort, running out of memory), becomes that
implementation's error with the reason and the last lines the child wrote to stderr, and the
run goes on with the others. The cost is a process start (the child imports the user's module
and its framework once) and a copy of each input and output through a pipe."""
from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import tempfile
import weakref
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess

import numpy as np

from ..errors import ImplementationError

STDERR_LINES = 8


def _serve(conn, build, spec: str, function: str, framework: str, device: str,
           stderr_path: str):
    """The child: build the kernel once (``build``, the registry's, given by whoever made
    the ChildKernel: this module names no registry), then answer each array with its
    result."""
    fd = os.open(stderr_path, os.O_WRONLY | os.O_APPEND)
    os.dup2(fd, 2)  # what the child prints to stderr is kept for the report of its death
    kernel = build(spec, function, framework, device)
    while True:
        try:
            x = conn.recv()
        except EOFError:
            return
        try:
            conn.send(("ok", np.asarray(kernel(x))))
        except Exception as exc:  # noqa: BLE001 - reported back as the implementation's error
            conn.send(("raised", f"{type(exc).__name__}: {exc}"))


def _clean_up(children: list, log: str) -> None:
    """A ChildKernel's child stopped and its stderr log removed."""
    for process in children:
        process.kill()
        process.join()
    with contextlib.suppress(OSError):
        os.unlink(log)


class ChildKernel:
    """A NumPy-in, NumPy-out kernel whose calls run in a child process; ``timeout`` in
    seconds per call (None: no limit). ``build(spec, function, framework, device)`` makes the
    kernel in the child (a module-level function, passed by reference); framework None:
    ``spec`` names a built-in one."""

    def __init__(self, build, spec: str, function: str, framework: str | None, device: str,
                 timeout: float | None):
        self.args = (build, spec, function, framework, device)
        self.timeout = timeout
        self._process: BaseProcess | None = None
        self._conn: Connection | None = None
        with tempfile.NamedTemporaryFile(prefix="gelucheck-child-", suffix=".log",
                                         delete=False) as log:
            self._log = log.name  # what the child writes to stderr, appended
        # the one running, if any: for the cleanup, which holds no self
        self._children: list[BaseProcess] = []
        # the child stopped and its log removed when this is collected or at exit, whichever
        # comes first (atexit runs it: the command line leaves without the teardown)
        weakref.finalize(self, _clean_up, self._children, self._log)

    def _start(self) -> tuple[BaseProcess, Connection]:
        ctx = multiprocessing.get_context("spawn")
        self._conn, child = ctx.Pipe()
        self._process = ctx.Process(target=_serve, args=(child, *self.args, self._log),
                                    daemon=True)
        self._process.start()
        self._children[:] = [self._process]
        child.close()
        return self._process, self._conn

    def _stop(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.join()
        self._process = self._conn = None
        self._children.clear()

    def _death(self, process: BaseProcess) -> str:
        process.join(5)
        code = process.exitcode
        if code is not None and code < 0:
            how = f"killed by {signal.Signals(-code).name}"
        else:
            how = f"ended with exit status {code}"
        with open(self._log, errors="replace") as fh:
            tail = [line.rstrip() for line in fh.readlines()[-STDERR_LINES:] if line.strip()]
        return how + (("; its stderr ended: " + " | ".join(tail)) if tail else "")

    def __call__(self, x: np.ndarray) -> np.ndarray:
        if self._process is None or self._conn is None:
            process, conn = self._start()
        else:
            process, conn = self._process, self._conn
        try:
            conn.send(x)
            if not conn.poll(self.timeout):
                self._stop()
                raise ImplementationError(f"did not return within {self.timeout:g} s "
                                          "(stopped)")
            status, payload = conn.recv()
        except (EOFError, BrokenPipeError, ConnectionResetError):
            reason = self._death(process)
            self._stop()
            raise ImplementationError(f"died: its process was {reason}") from None
        if status == "raised":
            raise ImplementationError(f"raised {payload}")
        return payload


def isolate(impl, build, timeout: float | None = None):
    """The same implementation, its calls made in a child process (a built-in one: the child
    loads its backend itself, by ``build``). The framework's own extra paths stay here."""
    from dataclasses import replace

    if isinstance(impl.kernel, ChildKernel):
        return impl
    kernel = ChildKernel(build, impl.id, impl.function.name, None, impl.device, timeout)
    return replace(impl, kernel=kernel, paths=None, rows_batch=False)

"""``report``: the backends built on torch measured in a process of their own, beside this one.

Importing torch takes seconds, and transformers (or timm) as much again on top of it. Forked
before either is imported, a second process loads and measures them while this one loads and
measures the other backends: on two cores the report takes about the longer of the two instead
of their sum (scripts/first-report-time.py measures it). The results come back as the same typed
values, put in the order measuring every backend in turn gives them, and what the process printed
is printed here (after this process's notes), so that the report reads as one."""
from __future__ import annotations

import contextlib
import io
import multiprocessing
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field

from ..backends import TORCH_FAMILY
from ..formats import Format


@dataclass
class Measured:
    """What the other process measured, and what it printed on the way."""

    results: list
    stdout: str
    stderr: str
    timings: dict = field(default_factory=dict)


def names(args) -> list[str]:
    """The backends to measure beside: the torch family, where ``report`` takes every backend
    in turn (options.streams) on more than one core of Linux (a fork is safe there before
    torch loads; macOS's frameworks are not fork-safe) - not with --function (whether anything
    computes it is decided over every backend) or --consistency (it measures each
    implementation again, here)."""
    from ..backends import backend_names
    from . import options

    if (not options.streams(args) or args.function or getattr(args, "consistency", False)
            or _cores() < 2 or not sys.platform.startswith("linux")):
        return []
    return [name for name in backend_names() if name in TORCH_FAMILY]


def _cores() -> int:
    """The cores this process may run on (its affinity: ``taskset -c 0`` measures in turn)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _measure(args, names: list[str], dtypes: list[Format], keep_errors: bool) -> Measured:
    """In the other process: those backends loaded and measured, drift of their tanh forms
    included (the mathematical forms' drift is the first process's)."""
    from .. import measurement
    from . import options

    out, err = io.StringIO(), io.StringIO()
    timings: dict = {}
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        results = measurement.run_groups(
            options.selected_by_backend(args, names, own_impls=False), dtypes,
            progress=False, keep_errors=keep_errors, timings=timings, reference_drift=False)
    return Measured(results, out.getvalue(), err.getvalue(), timings)


def _measure_and_send(send, *work) -> None:
    """The other process's whole life: measure, send what it measured (or what stopped it),
    exit. No pool: a pool's idle worker outlives a parent that ends without its exit hooks."""
    try:
        send.send(_measure(*work))
    except BaseException as exc:  # noqa: BLE001 - whatever it was, raised in the first process
        try:
            send.send(exc)
        except Exception:  # noqa: BLE001 - an exception that does not pickle: its text
            send.send(RuntimeError(f"{type(exc).__name__}: {exc}"))
    finally:
        send.close()


class Beside:
    """The other process's measurement, started at once: ``poll`` and ``wait`` hand its
    results to the first-results display and advance the bar by its backends; ``merged``
    puts them among this process's."""

    def __init__(self, args, names: list[str], dtypes: list[Format], keep_errors: bool):
        self.names, self.work = names, (args, names, dtypes, keep_errors)
        self.dtypes = dtypes
        # forked before torch is imported here: nothing of it is copied, and no thread yet
        context = multiprocessing.get_context("fork")
        self._receive, send = context.Pipe(duplex=False)
        self._process = context.Process(target=_measure_and_send, args=(send, *self.work),
                                        daemon=True)
        self._process.start()
        send.close()
        self.measured: Measured | None = None

    def poll(self, bar, on_group: Callable[[list], None] | None) -> None:
        if self.measured is None and self._receive.poll():
            self._take(bar, on_group)

    def wait(self, bar, on_group: Callable[[list], None] | None) -> None:
        if self.measured is None:
            bar.set_postfix_str(f"{', '.join(self.names)} (measured in a process of their own)",
                                refresh=True)
            self._take(bar, on_group)

    def _take(self, bar, on_group: Callable[[list], None] | None) -> None:
        """The other process's results, waited for with the bar on screen saying so."""
        try:
            received = self._receive.recv()
        except EOFError:  # it died: measured here instead, as in turn
            self._process.join()
            with bar.external_write_mode(file=sys.stderr):
                print(f"note: measuring {', '.join(self.names)} in a process of their own "
                      f"failed (exit status {self._process.exitcode}): measured here",
                      file=sys.stderr)
            received = _measure(*self.work)
        self._process.join()
        if isinstance(received, BaseException):
            raise received
        self.measured = received
        bar.update(len(self.names))
        if on_group is not None:
            with bar.external_write_mode(file=sys.stderr):
                on_group([r for r in received.results if r.kind == "accuracy"])

    def merged(self, results: list, timings: dict) -> list:
        """This process's ``results`` and the other's, in the order measuring every backend
        in turn gives (the backends' order, then each dtype's drift, the mathematical forms'
        first); what it printed printed now, and its timings added to ``timings``."""
        from ..backends import backend_names

        assert self.measured is not None, "merged before wait"
        sys.stdout.write(self.measured.stdout)
        sys.stderr.write(self.measured.stderr)
        for backend, seconds in self.measured.timings.get("compile", {}).items():
            timings.setdefault("compile", {})[backend] = seconds
        timings["measure"] = (timings.get("measure", 0.0)
                              + self.measured.timings.get("measure", 0.0))
        order = {name: i for i, name in enumerate(backend_names())}
        dtype_order = {fmt.name: i for i, fmt in enumerate(self.dtypes)}
        both = results + self.measured.results
        accuracy = [r for r in both if r.kind != "drift"]
        drift = [r for r in both if r.kind == "drift"]
        accuracy.sort(key=lambda r: order.get(r.identity.backend, len(order)))
        drift.sort(key=lambda r: (dtype_order.get(r.dtype, len(dtype_order)), not r.mathematical,
                                  order.get(r.tanh_implementation.split(":")[0], len(order))))
        return accuracy + drift

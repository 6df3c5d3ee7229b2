#!/usr/bin/env python3
"""Settings of the sweep's blocks compared side by side: each setting sweeps the same tasks in
turn, three rounds, alternating, so that the machine's drift falls on all of them alike; the
tasks of a setting run in WORKERS processes at once, as the sweep's workers do, since
processes that share the caches favour other block sizes than one process alone (closed-form
spans: 2^20 best alone, 2^19 with two workers - docs/design.md, The sweep). Prints, per
setting, the CPU seconds per 2^24 inputs, the implementation's share and the ratio (medians
of the rounds), and the wall of a round.

    scripts/sweep-ab.py torch:F.gelu gelu 4 KNOWN_SPAN=2^19 KNOWN_SPAN=2^20
    scripts/sweep-ab.py torch:F.gelu+scipy:x*ndtr gelu 8 COMPILED_BLOCK=2^17 COMPILED_BLOCK=2^18
    WORKERS=1 scripts/sweep-ab.py torch:F.gelu gelu 1 KNOWN_SPAN=2^19 KNOWN_SPAN=2^20
    scripts/sweep-ab.py torch:erf erf 1 replay.MEMORY=0 replay.MEMORY=2^27

SPEC: backend:name, several joined by +; EVERY (4 here): one task of 2^24 in EVERY; each
setting: NAME=VALUE[,NAME=VALUE], names of gelucheck.sweep.chunk's module constants (or
MODULE.NAME, of another module of gelucheck.sweep; set in every module that holds a copy of
it), values integers or 2^k. WORKERS
(environment): processes, default 2 (the sweep's default is one per core)."""
import importlib
import os
import statistics
import sys
import time

from gelucheck.functions import get_function
from gelucheck.sweep import chunk, proofs, reference, runner, worker

ROUNDS = 3
_WORKER = {}


def _module(name: str):
    """(the module of gelucheck.sweep a setting names, the constant's name)."""
    module, dot, constant = name.rpartition(".")
    if not dot:
        return chunk, constant
    try:
        return importlib.import_module(f"gelucheck.sweep.{module}"), constant
    except ImportError:
        raise SystemExit(f"{name}: no module gelucheck.sweep.{module}") from None


def parse(setting: str) -> dict:
    out = {}
    for item in setting.split(","):
        name, _, value = item.partition("=")
        module, constant = _module(name)
        if not hasattr(module, constant):
            raise SystemExit(f"{name}: not a setting of {module.__name__}")
        base, caret, power = value.partition("^")
        out[name] = int(base) ** int(power) if caret else int(value)
    return out


def _apply(name: str, value: int) -> None:
    """The setting in its module and in every module of gelucheck.sweep that holds a copy of
    it (``from .inputs import KNOWN_SPAN``): set in chunk alone, the span had left the task's
    input array at the old size, and each longer span was called on a slice of itself."""
    module, constant = _module(name)
    old = getattr(module, constant)
    for other in list(sys.modules.values()):
        if (getattr(other, "__name__", "").startswith("gelucheck.sweep.")
                and getattr(other, constant, None) is old):
            setattr(other, constant, value)


def _specs(spec: str, function_name: str) -> list[worker.Spec]:
    """The implementations of SPEC ("a+b": several), as a sweep's workers rebuild them."""
    return [worker.Spec(kind="builtin", impl=one, function=function_name)
            for one in spec.split("+")]


def _start(spec: str, function_name: str, config: dict) -> None:
    for name, value in config.items():
        _apply(name, value)
    function = get_function(function_name)
    _WORKER["impls"], _ = worker.tuned(_specs(spec, function.name))
    _WORKER["function"] = function
    reference.warm()
    proofs.warm_proofs()


def _task(task: tuple[int, int]) -> tuple[float, float]:
    """(CPU seconds, the implementations' own seconds) of one task."""
    begun = time.process_time()
    out = chunk.evaluate(_WORKER["impls"], _WORKER["function"], *task)
    own = sum(getattr(s, "eval_s", 0.0) for s in out.implementations.values())
    return time.process_time() - begun, own


def main(spec: str, function_name: str, every: str, *settings: str) -> None:
    configs = [parse(s) for s in settings]
    workers = int(os.environ.get("WORKERS", "2"))
    tasks = [(a, min(a + (1 << 24), hi)) for lo, hi in chunk.finite_ranges()
             for a in range(lo, hi, 1 << 24) if (a >> 24) % int(every) == 0]
    runs = [[] for _ in configs]
    # a fresh pool per setting and round, forked as the sweep's workers are (runner._workers):
    # processes that had run another setting carried its heap, and the order of the settings
    # then decided the winner by a few percent
    context = runner._fork_server(worker.preloads(_specs(spec, function_name)))
    for _ in range(ROUNDS):
        for config, found in zip(configs, runs):
            with context.Pool(workers, initializer=_start,
                              initargs=(spec, function_name, config)) as pool:
                pool.map(_task, [(a, min(a + (1 << 20), b)) for a, b in tasks[:workers]])
                begun = time.perf_counter()
                parts = pool.map(_task, tasks, chunksize=1)
                found.append((sum(t for t, _ in parts), sum(e for _, e in parts),
                              time.perf_counter() - begun))
    for setting, found in zip(settings, runs):
        total = statistics.median(t for t, _, _ in found) / len(tasks)
        own = statistics.median(e for _, e, _ in found) / len(tasks)
        ratios = [t / e for t, e, _ in found]
        print(f"{setting}: {total:.4f} s per 2^24, the implementation {own:.4f}, "
              f"{statistics.median(ratios):.3f}x (rounds: "
              f"{', '.join(f'{r:.3f}' for r in ratios)}); wall "
              f"{statistics.median(w for _, _, w in found):.2f} s, {workers} processes")


if __name__ == "__main__":
    if len(sys.argv) < 5:
        raise SystemExit(__doc__)
    main(*sys.argv[1:])

#!/usr/bin/env python3
"""The whole-float32 sweep against the implementation by itself, side by side, alternating:

1. the implementation alone evaluates every finite float32 input, in WORKERS processes of one
   thread taking tasks of 2^24 as the sweep's workers do, each writing its inputs into one
   reused array by the loop the sweep uses - what any evaluation of every input must do - in
   blocks of 2^18 to 2^22 (its best counts; which is best differs by CPU);
2. `gelucheck sweep --profile` over the same inputs with as many workers.

Prints, per round, CPU seconds per 2^24 inputs (the workers' loops, or the sweep's tasks) and
the walls (the loops from the first task to the last; the sweep's own), and the ratios. The
profile divides by the implementation's time inside the sweep; this divides by its time alone.

    scripts/sweep-against-alone.py torch:F.gelu gelu [WORKERS] [ROUNDS]
"""
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

BLOCKS = tuple(1 << k for k in range(18, 23))
TASK = 1 << 24
_WORKER = {}


def _start(spec: str, function: str) -> None:
    from gelucheck.sweep import loops, reference, worker

    _WORKER["impls"], _ = worker.tuned([{"kind": "builtin", "impl": spec, "function": function}])
    reference.warm()
    _WORKER["kernels"] = loops.kernels()


def _alone(task: tuple[int, int, int]) -> float:
    """CPU seconds of one task's evaluation by the implementations alone."""
    from gelucheck.sweep.inputs import encodings

    start, stop, block = task
    bits = _WORKER.setdefault(block, np.empty(block, dtype=np.uint32))
    begun = time.process_time()
    for a in range(start, stop, block):
        inputs = bits[:min(block, stop - a)]
        encodings(a, a + len(inputs), inputs)
        for impl in _WORKER["impls"]:
            impl(inputs.view(np.float32), intact=lambda x, out: True)
    return time.process_time() - begun


def alone(pool, tasks: list[tuple[int, int]], n: int) -> dict[int, tuple[float, float]]:
    """{block: (CPU s per 2^24, wall s)} of the implementations alone over the tasks."""
    out = {}
    for block in BLOCKS:
        pool.map(_alone, [(a, min(a + block, b), block) for a, b in tasks[:2]])  # warm
        begun = time.perf_counter()
        cpu = sum(pool.map(_alone, [(a, b, block) for a, b in tasks], chunksize=1))
        out[block] = cpu / n * TASK, time.perf_counter() - begun
    return out


def swept(spec: str, function: str, workers: int) -> tuple[float, float]:
    """(CPU s per 2^24, wall s) of `gelucheck sweep` over all finite float32 inputs."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "sweep.json")
        subprocess.run([sys.executable, "-m", "gelucheck.cli", "sweep", "--backend", spec,
                        "--function", function, "--workers", str(workers), "--no-progress",
                        "--json", path], check=True, stdout=subprocess.DEVNULL)
        with open(path) as f:
            result = json.load(f)["results"][0]
    return result["task_s"] / result["n_evaluated"] * TASK, result["wall_s"]


def main(spec: str, function: str, workers: int = 2, rounds: int = 3) -> None:
    from gelucheck.sweep import chunk

    tasks = [(a, min(a + TASK, hi)) for lo, hi in chunk.finite_ranges()
             for a in range(lo, hi, TASK)]
    n = sum(b - a for a, b in tasks)
    context = multiprocessing.get_context("spawn")
    ratios = []
    with context.Pool(workers, initializer=_start, initargs=(spec, function)) as pool:
        for _ in range(rounds):
            own = alone(pool, tasks, n)
            best = min(own, key=lambda b: own[b][0])
            cpu, wall = own[best]
            sweep_cpu, sweep_wall = swept(spec, function, workers)
            ratios.append((sweep_cpu / cpu, sweep_wall / wall))
            print(f"alone (blocks of 2^{best.bit_length() - 1}): {cpu:.4f} s per 2^24, "
                  f"{wall:.2f} s wall; the sweep: {sweep_cpu:.4f} s per 2^24, "
                  f"{sweep_wall:.2f} s wall - {ratios[-1][0]:.2f}x in CPU, "
                  f"{ratios[-1][1]:.2f}x in wall", flush=True)
    print(f"median of {rounds}: {statistics.median(r for r, _ in ratios):.2f}x in CPU, "
          f"{statistics.median(w for _, w in ratios):.2f}x in wall")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], *(int(a) for a in sys.argv[3:5]))

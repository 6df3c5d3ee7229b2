#!/usr/bin/env python3
"""Where a whole-float32 sweep's time goes, by kind of block, in one process: the runs scored
in closed form ("known"), the middle that the compiled loops compute ("compiled"), and the
rest (NumPy's paths: below 2^-124, the edges of the parts, the derivatives' middle) - CPU
seconds per 2^24 inputs of each kind and what each adds per 2^24 of all inputs.

    scripts/sweep-time-by-part.py torch:F.gelu gelu [EVERY] [--tasks]

EVERY: sweep one task of 2^24 in EVERY (default 1, all 2^32: about 10 s for torch's GELU).
--tasks: also each task that is not all closed form, in ns an input: where in the middle the
time goes.

Then the implementation alone over the same inputs, in the block size that suits it best
(2^16 to 2^20 tried, inputs written into one reused array, best of two rounds): the sweep's
profile divides by the implementation's time inside the sweep, where gelucheck's own passes
share the caches with it; this is the time it takes by itself."""
import sys
import time
from collections import defaultdict

import numpy as np

from gelucheck.formats import FLOAT32
from gelucheck.functions import get_function
from gelucheck.sweep import chunk, reference, worker
from gelucheck.sweep.inputs import encodings
from gelucheck.sweep.known import is_known


def main(spec: str, function_name: str, every: int = 1, per_task: bool = False) -> None:
    function = get_function(function_name)
    impls, _ = worker.tuned([{"kind": "builtin", "impl": spec, "function": function.name}])
    reference.warm()
    parts = defaultdict(lambda: np.zeros(5))  # inputs, reference, evaluation, check, total
    tasks_parts = defaultdict(lambda: np.zeros(5))  # the same by task, outside closed form
    task_ends = {}  # task: (first, last) encoding outside closed form
    evaluate_block, known_run = chunk.evaluate_block, chunk._known_run

    def record(kind: str, a: int, b: int, out, total: float) -> None:
        figures = list(out.implementations.values()) if out else []
        evals = sum(getattr(f, "eval_s", 0.0) for f in figures)
        checks = sum(getattr(f, "check_s", 0.0) for f in figures)
        row = [b - a, out.reference_s if out else 0.0, evals, checks, total]
        parts[kind] += row
        if kind != "known":
            tasks_parts[a >> 24] += row
            first, last = task_ends.get(a >> 24, (a, b - 1))
            task_ends[a >> 24] = min(first, a), max(last, b - 1)

    def timed_block(impls, function, a, b, *inputs):
        begun = time.perf_counter()
        out = evaluate_block(impls, function, a, b, *inputs)
        total = time.perf_counter() - begun
        ends = FLOAT32.from_bits(np.array([a, b - 1], dtype=np.uint32))
        if is_known(function, float(ends[0]), float(ends[1])):
            kind = "known"
        elif reference.one_compiled_run(function, float(ends[0]), float(ends[1])):
            kind = "compiled"
        else:
            kind = "other"
        record(kind, a, b, out, total)
        return out

    def timed_run(impls, function, a, b, *rest):  # a run of closed-form spans, up to where
        begun = time.perf_counter()  # its outputs left the closed form (then blocks)
        out, end, given = known_run(impls, function, a, b, *rest)
        record("known", a, end, out, time.perf_counter() - begun)
        return out, end, given

    chunk.evaluate_block, chunk._known_run = timed_block, timed_run
    tasks = [(a, min(a + (1 << 24), hi)) for lo, hi in chunk.finite_ranges()
             for a in range(lo, hi, 1 << 24) if (a >> 24) % every == 0]
    for a, b in tasks:
        chunk.evaluate(impls, function, a, b)
    if per_task:
        for task, (n, ref, ev, check, total) in sorted(tasks_parts.items()):
            lo, hi = FLOAT32.from_bits(np.array(task_ends[task], dtype=np.uint32))
            ns = 1e9 / n
            print(f"task {lo:11.4g} .. {hi:11.4g} ({n / (1 << 24):4.0%} of the task), ns an "
                  f"input: reference {ref * ns:.3f}, implementation {ev * ns:.3f}, comparison "
                  f"{check * ns:.3f}, all {total * ns:.3f}")
    whole = sum(parts.values())
    per_all = (1 << 24) / whole[0]
    for kind, (n, ref, ev, check, total) in sorted(parts.items()):
        own = (1 << 24) / n
        print(f"{kind:9s} {n / whole[0]:6.1%} of inputs; per 2^24 of its own: reference "
              f"{ref * own:.4f}, implementation {ev * own:.4f}, comparison {check * own:.4f}; "
              f"adds {(total - ev) * per_all:.4f} per 2^24 of all")
    print(f"all: {whole[4] * per_all:.4f} per 2^24, the implementation {whole[2] * per_all:.4f}: "
          f"{whole[4] / whole[2]:.2f}x")
    size, (with_inputs, calls) = alone(impls, tasks)
    print(f"the implementation alone, in blocks of 2^{size.bit_length() - 1}: "
          f"{calls * per_all:.4f} per 2^24 ({with_inputs * per_all:.4f} with writing its inputs): "
          f"the sweep is {whole[4] / calls:.2f}x that ({whole[4] / with_inputs:.2f}x)")


def alone(impls, tasks) -> tuple[int, tuple[float, float]]:
    """(block size, (seconds writing the inputs and calling, seconds calling)) of the fastest
    block size for the implementations by themselves over the tasks."""
    best = {}
    for _ in range(2):
        for size in (1 << 16, 1 << 17, 1 << 18, 1 << 19, 1 << 20):
            inputs = np.empty(size, dtype=np.uint32)
            writing = calling = 0.0
            for a, b in tasks:
                for start in range(a, b, size):
                    bits = inputs[:min(size, b - start)]
                    begun = time.perf_counter()
                    encodings(start, start + len(bits), bits)
                    called = time.perf_counter()
                    for impl in impls:
                        impl(bits.view(np.float32), intact=lambda x, out: True)
                    done = time.perf_counter()
                    writing, calling = writing + called - begun, calling + done - called
            old = best.get(size, (np.inf, np.inf))
            best[size] = min(old[0], writing + calling), min(old[1], calling)
    size = min(best, key=lambda k: best[k][1])
    return size, best[size]


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--tasks"]
    main(args[0], args[1], int(args[2]) if len(args) > 2 else 1, "--tasks" in sys.argv)

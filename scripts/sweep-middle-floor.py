#!/usr/bin/env python3
"""What the sweep's bookkeeping costs in its compiled middle: a task of 2^24 encodings
through chunk.evaluate, against the same work with none of it - block by block
(chunk.MERGED_BLOCK, as the plan merges them), the compiled reference loop, the proofs of
its doubts, each implementation called as the sweep calls it (inputs.call: gelucheck's
wrapper and the guard that rewrites the next block's inputs), the compiled comparison and,
where an error reaches 4 ulps, the histogram's pass. The difference is what trimming Python
around those passes could gain at most; "the passes alone" leaves out the proofs too.

One process, the worker's malloc settings (worker._tune_process); CPU seconds, the best of
ROUNDS rounds (default 3) taken in turn, so that the machine's drift falls on all three.

    scripts/sweep-middle-floor.py torch:F.gelu gelu 36 3e be [--rounds=N]

TASK: hex, a task's first encoding >> 24; every one of its blocks must be one compiled run
(the middle between the closed-form parts, within one piece of the loops): any other task
is refused, before anything is timed."""
import sys
import time

import numpy as np

from gelucheck.errors import GelucheckError
from gelucheck.formats import FLOAT32
from gelucheck.functions import get_function
from gelucheck.sweep import chunk, loops, reference, worker
from gelucheck.sweep.inputs import Inputs, call
from gelucheck.sweep.proofs import resolve_all, warm_proofs
from gelucheck.sweep.stats import BINS

TASK = 1 << 24


def passes(impls, function, start: int, prove: bool) -> None:
    """The task's compiled passes and calls, block by block, with no figures kept."""
    compiled, module = loops.kernels(), reference.module_of(function)
    block = chunk.MERGED_BLOCK
    inputs = Inputs()
    for a in range(start, start + TASK, block):
        inputs.following = a + block if a + block < start + TASK else None
        bits = inputs.block(a, a + block)
        x = bits.view(np.float32)
        v, unit, doubt = module.compiled_run(function, x)  # (refusal: one compiled run)
        if prove and doubt.any():
            resolve_all(function, x, np.flatnonzero(doubt), v, unit)
        for position, impl in enumerate(impls, 1):
            y = call(impl, x, a, inputs if position == len(impls) else None).y
            if compiled.score(y, v, unit)[5]:  # an error of 4 ulps or more
                compiled.histogram_above_four(y, v, unit, np.zeros(BINS, dtype=np.int64))


def refusal(function, start: int) -> str | None:
    """Why the task at ``start`` is no task of the compiled middle, or None: the sweep scores
    it in closed form somewhere, or some block is no one compiled run."""
    for a, b, known in chunk.block_plan(function, start, start + TASK):
        if known:
            return f"0x{a:08x} is scored in closed form, not by the compiled middle"
        if b - a != chunk.MERGED_BLOCK or not reference.one_compiled_run(
                function, *map(float, FLOAT32.from_bits(np.array([a, b - 1], np.uint32)))):
            return f"[0x{a:08x}, 0x{b:08x}) is no compiled run of {function.name}"
    return None


def main(spec: str, function_name: str, tasks: list[int], rounds: int = 3) -> None:
    function = get_function(function_name)
    for task in tasks:
        if (why := refusal(function, task << 24)) is not None:
            sys.exit(f"task 0x{task:02x}: {why}")
    impls, _ = worker.tuned([{"kind": "builtin", "impl": spec, "function": function.name}])
    reference.warm([function])
    warm_proofs()
    ways = {"evaluate": lambda a: chunk.evaluate(impls, function, a, a + TASK),
            "the passes and proofs": lambda a: passes(impls, function, a, True),
            "the passes alone": lambda a: passes(impls, function, a, False)}
    for task in tasks:
        start = task << 24
        best = dict.fromkeys(ways, np.inf)
        for way in ways.values():  # warm: numba's dispatch, torch's first calls, Arb
            way(start)
        for _ in range(rounds):
            for name, way in ways.items():
                clock = time.process_time()
                way(start)
                best[name] = min(best[name], time.process_time() - clock)
        whole, proved, alone = best.values()
        print(f"task 0x{task:02x}: " + ", ".join(
            f"{name} {seconds * 1e3:.1f} ms ({seconds / TASK * 1e9:.2f} ns an input)"
            for name, seconds in best.items())
            + f"; bookkeeping {(whole - proved) / whole:.0%} of the task, proofs "
              f"{(proved - alone) / whole:.0%}")


def task_of(text: str) -> int:
    """A TASK argument: hex, naming a task of finite encodings."""
    try:
        task = int(text, 16)
    except ValueError:
        sys.exit(f"TASK is a task's first encoding >> 24, in hex (36, 3e, be), not {text!r}")
    if not any(lo <= task << 24 and (task + 1) << 24 <= hi for lo, hi in chunk.finite_ranges()):
        sys.exit(f"task 0x{task:02x} is not a task of finite float32 inputs (00-7e, 80-fe)")
    return task


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--rounds")]
    rounds = [a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--rounds")]
    if len(args) < 3 or len(rounds) > 1 or (rounds and not rounds[0].isdigit()):
        sys.exit(__doc__)
    try:
        main(args[0], args[1], [task_of(t) for t in args[2:]], int(rounds[0]) if rounds else 3)
    except GelucheckError as exc:  # an unknown function or backend: the valid ones named
        sys.exit(str(exc))

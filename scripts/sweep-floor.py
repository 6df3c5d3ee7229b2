#!/usr/bin/env python3
"""The least any exhaustive check of K implementations must add to their own time, measured
where the sweep needs no reference at all: GELU's saturated right (from x = 2^33, where
GELU(x) = x, so the check of an output is that it holds its inputs' encodings).

One process, one thread, spans of the sweep's size (chunk.KNOWN_SPAN), the worker's malloc
settings (worker._tune_process). Each implementation is called through gelucheck's wrapper
as the sweep calls it, then

1. each output is read once, by the sweep's compiled test of an encoding run;
2. the same, and each call's inputs read once too: the guard that it left them intact;
3. the same, the last call's guard rewriting its inputs as the next span's in its pass, as
   the sweep's does (kernels.consecutive_then).

In 1 and 2 the inputs are written apart, not counted; in 3 that write is the guard's.

Prints, per round, the implementations' own time and each floor's, in ns an input, and their
ratios: the issue's aim for K implementations is (one reference + their evaluations) x 1.2,
and here the reference costs nothing. Every span's outputs must be the closed form's (else
the script stops: this region's floor is not that implementation's).

    scripts/sweep-floor.py torch:F.gelu [K] [ROUNDS] [SPANS]
"""
import statistics
import sys
import time

import numpy as np

FIRST = 0x50000000  # 2^33


def main(spec: str, k: int = 2, rounds: int = 3, spans: int = 256) -> None:
    from gelucheck.sweep import loops
    from gelucheck.sweep.chunk import KNOWN_SPAN
    from gelucheck.sweep.worker import tuned

    (impl, *_), _ = tuned([{"kind": "builtin", "impl": spec, "function": "gelu"}])
    compiled = loops.kernels()
    if compiled is None:
        sys.exit("needs numba (pip install 'gelucheck[fast]'): the floor is the compiled passes'")
    bits = np.empty(KNOWN_SPAN, dtype=np.uint32)
    x = bits.view(np.float32)
    untested = lambda given, out: True

    def round_(floor: int) -> tuple[float, float]:
        calls = passes = 0.0
        compiled.encodings(bits, np.uint32(FIRST))
        for s in range(spans):
            first = np.uint32(FIRST + s * KNOWN_SPAN)
            if floor < 3:
                compiled.encodings(bits, first)
            for call in range(1, k + 1):
                clock = time.perf_counter()
                y = impl(x, intact=untested)
                checked = time.perf_counter()
                if not compiled.consecutive(y.view(np.uint32), first):
                    sys.exit(f"{spec}: an output from 0x{int(first):08x} is not x itself")
                if floor == 3 and call == k:  # the sweep's last guard: the next span's too
                    intact = compiled.consecutive_then(bits, first,
                                                       np.uint32(first + KNOWN_SPAN))
                else:
                    intact = floor == 1 or compiled.consecutive(bits, first)
                if not intact:
                    sys.exit(f"{spec} wrote to its inputs")
                calls += checked - clock
                passes += time.perf_counter() - checked
        n = spans * KNOWN_SPAN
        return calls / n * 1e9, passes / n * 1e9

    floors = {1: "each output read", 2: "each output read, each call's inputs read",
              3: "each output read, each call's inputs read and the next span's written"}
    round_(3)  # warm: the loops, torch's first calls
    ratios: dict[int, list[float]] = {floor: [] for floor in floors}
    for r in range(rounds):
        for floor, what in floors.items():
            calls, passes = round_(floor)
            ratios[floor].append((calls + passes) / calls)
            print(f"round {r + 1}, {what}: {k} x {spec} {calls:.3f} ns an input, the passes "
                  f"{passes:.3f} -> {(calls + passes) / calls:.2f}x")
    print(f"median over {rounds}: " + ", ".join(
        f"{statistics.median(ratios[floor]):.2f}x {what}" for floor, what in floors.items()))


if __name__ == "__main__":
    args = sys.argv[1:]
    if not args or len(args) > 4:
        sys.exit(__doc__)
    main(args[0], *map(int, args[1:]))

#!/usr/bin/env python3
"""Settings of the sweep's blocks compared side by side, in one process: each setting sweeps
the same tasks in turn, three rounds, alternating, so that the machine's drift falls on all
of them alike. Prints, per setting, the CPU seconds per 2^24 inputs, the implementation's
share and the ratio (medians of the rounds).

    scripts/sweep-ab.py torch:F.gelu gelu 4 KNOWN_SPAN=2^19 KNOWN_SPAN=2^20
    scripts/sweep-ab.py torch:F.gelu+scipy:x*ndtr gelu 8 COMPILED_BLOCK=2^17 COMPILED_BLOCK=2^18

SPEC: backend:name, several joined by +; EVERY (4 here): one task of 2^24 in EVERY; each
setting: NAME=VALUE[,NAME=VALUE], names of gelucheck.sweep.chunk's module constants, values
integers or 2^k."""
import statistics
import sys
import time

from gelucheck.functions import get_function
from gelucheck.sweep import chunk, fastref, runner

ROUNDS = 3


def parse(setting: str) -> dict:
    out = {}
    for item in setting.split(","):
        name, _, value = item.partition("=")
        if not hasattr(chunk, name):
            raise SystemExit(f"{name}: not a setting of gelucheck.sweep.chunk")
        base, caret, power = value.partition("^")
        out[name] = int(base) ** int(power) if caret else int(value)
    return out


def main(spec: str, function_name: str, every: str, *settings: str) -> None:
    configs = [parse(s) for s in settings]
    runner._tune_process()
    function = get_function(function_name)
    impls = [i for one in spec.split("+")
             for i in runner.resolve({"kind": "builtin", "impl": one, "function": function.name})]
    fastref.warm_kernels()
    fastref.warm_proofs()
    tasks = [(a, min(a + (1 << 24), hi)) for lo, hi in chunk.finite_ranges()
             for a in range(lo, hi, 1 << 24) if (a >> 24) % int(every) == 0]
    runs = [[] for _ in configs]
    for _ in range(ROUNDS):
        for config, found in zip(configs, runs):
            for name, value in config.items():
                setattr(chunk, name, value)
            begun, own = time.process_time(), 0.0
            for a, b in tasks:
                out = chunk.evaluate(impls, function, a, b)
                own += sum(s.get("eval_s", 0.0) for s in out["implementations"].values())
            found.append((time.process_time() - begun, own))
    for setting, found in zip(settings, runs):
        total = statistics.median(t for t, _ in found) / len(tasks)
        own = statistics.median(e for _, e in found) / len(tasks)
        ratios = [t / e for t, e in found]
        print(f"{setting}: {total:.4f} s per 2^24, the implementation {own:.4f}, "
              f"{statistics.median(ratios):.3f}x (rounds: "
              f"{', '.join(f'{r:.3f}' for r in ratios)})")


if __name__ == "__main__":
    if len(sys.argv) < 5:
        raise SystemExit(__doc__)
    main(*sys.argv[1:])

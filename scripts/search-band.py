#!/usr/bin/env python3
"""Uniform samples in one band of float64 inputs, for a set time: what `gelucheck search`
would find there if it spent its whole budget on that band. Its cells, fast reference and
settling by mpmath are the search's own (docs/findings/float64-search.md: glibc's erfc just
below fdlibm's seam at 1.25, where the errors are rounding noise under a smooth envelope and
the search's descents to small cells searched whole pay less than samples spread over the
band).

    scripts/search-band.py libm:erfc erfc 1.2495 10 600 [--seed S]

The band: the cell of 2^-LEVEL of a binade that holds X (10: [1.2490234375, 1.25) for X =
1.2495), split into 1,024 cells, each sampled 2^14 times per round, rounds seeded S, S + 1,
... Prints each new worst as found, by the fast reference, and at the end the worst
candidates settled by mpmath."""
import argparse
import time

from gelucheck.functions import get_function
from gelucheck.search.cells import Cell
from gelucheck.search.engine import run_chunk
from gelucheck.search.settle import settle
from gelucheck.sweep.worker import Spec

SPLIT_BITS = 10
SAMPLES = 1 << 14
KEPT = 8


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("impl", help="BACKEND:IMPL, e.g. libm:erfc")
    parser.add_argument("function")
    parser.add_argument("x", type=float, help="an input inside the band")
    parser.add_argument("level", type=int, help="the band is 2^-LEVEL of X's binade")
    parser.add_argument("seconds", type=float)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    spec = Spec(kind="builtin", impl=args.impl, function=args.function)
    band = Cell.holding(args.x, args.level)
    cells = band.children(SPLIT_BITS)
    print(f"band {band}: {band.size:,} encodings, {len(cells)} cells", flush=True)
    start, seed, evaluated, kept = time.perf_counter(), args.seed, 0, []
    while time.perf_counter() - start < args.seconds:
        for result in run_chunk(spec, args.function, cells, SAMPLES, seed):
            evaluated += result.evaluated
            best = kept[0].error if kept else 0.0
            kept = sorted([*kept, *result.worst], key=lambda c: -c.error)[:KEPT]
            if kept[0].error > best:
                c = kept[0]
                print(f"{time.perf_counter() - start:.0f} s, {evaluated:,} inputs: "
                      f"{c.error:.4f} ulp at x = {c.x!r} ({c.x.hex()})", flush=True)
        seed += 1
    for s in settle(get_function(args.function), kept)[:1]:
        c = s.candidate
        print(f"worst: {s.error:.4f} ulp (mpmath) at x = {c.x!r} ({c.x.hex()}): returned "
              f"{c.y.hex()}, correctly rounded {s.exact.hex()}; {evaluated:,} inputs, "
              f"seeds {args.seed}-{seed - 1}")


if __name__ == "__main__":
    main()

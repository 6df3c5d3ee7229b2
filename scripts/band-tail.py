#!/usr/bin/env python3
"""How heavy the tail of an implementation's float64 errors is, band by band: in each band of
2^-LEVEL of a binade, from the one that holds X downwards, the count of inputs whose error
passes each threshold, over blocks of 2^20 consecutive encodings drawn at random (the
search's whole cells), scored by the search's fast reference. Where the errors are rounding
noise (glibc's erfc below 1.25) this says where a search must spend its inputs
(docs/findings/float64-search.md).

    scripts/band-tail.py libm:erfc erfc 1.2495 10 --bands 8 --blocks 100
"""
import argparse

import numpy as np

from gelucheck.functions import get_function
from gelucheck.search.cells import Cell
from gelucheck.search.reference import Reference
from gelucheck.search.score import ulps
from gelucheck.search.task import BLOCK
from gelucheck.sweep.worker import Spec, resolve

THRESHOLDS = (3.0, 4.0, 4.2, 4.4, 4.6, 4.8, 5.0)
WHOLE = 1 << 20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("impl", help="BACKEND:IMPL, e.g. libm:erfc")
    parser.add_argument("function")
    parser.add_argument("x", type=float, help="an input in the first band")
    parser.add_argument("level", type=int, help="a band is 2^-LEVEL of X's binade")
    parser.add_argument("--bands", type=int, default=4)
    parser.add_argument("--blocks", type=int, default=100, help="blocks of 2^20 per band")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    (impl,) = resolve(Spec(kind="builtin", impl=args.impl, function=args.function))
    reference = Reference(get_function(args.function))
    rng = np.random.default_rng(args.seed)
    first = Cell.holding(args.x, args.level)
    print(f"{args.impl} {args.function}: inputs above each error (ulps), "
          f"{args.blocks} blocks of 2^20 a band")
    print(f"{'band':48s} {'inputs':>12s} " + " ".join(f">{t:<6}" for t in THRESHOLDS)
          + " largest (fast reference) at x")
    for k in range(args.bands):
        if first.index - k < 0:
            break
        band = Cell(first.sign, first.binade, first.level, first.index - k)
        counts, largest, at = np.zeros(len(THRESHOLDS), dtype=np.int64), -1.0, 0.0
        for start in rng.integers(band.first, band.last - WHOLE, size=args.blocks,
                                  endpoint=True, dtype=np.uint64):
            x = np.arange(start, start + WHOLE, dtype=np.uint64).view(np.float64)
            if band.sign:
                x = -x
            y = np.asarray(impl(x), dtype=np.float64)
            for a in range(0, WHOLE, BLOCK):
                error, _ = ulps(y[a:a + BLOCK], reference.values(x[a:a + BLOCK]))
                counts += (error[:, None] > np.array(THRESHOLDS)).sum(axis=0)
                i = int(np.argmax(error))
                if error[i] > largest:
                    largest, at = float(error[i]), float(x[a + i])
        print(f"{band!s:48s} {args.blocks * WHOLE:12,d} "
              + " ".join(f"{c:<7d}" for c in counts) + f" {largest:.3f} {at.hex()}")


if __name__ == "__main__":
    main()

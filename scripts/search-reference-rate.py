"""The float64 search's fast reference against Arb, side by side in one run, on one core:
float64 values per second of erfc (or --function) - Arb's ball at 120 bits point by point (the
issue's yardstick), the search's own Arb path (192 bits, split into double-double with its
bound), and the certified expansions on a dense run of consecutive inputs (a whole cell of
2^20 encodings, as the search takes them) and on inputs spread over 2^-6 of a binade; and a
whole cell's scoring, where each value and its error in ulps come from one compiled loop (in
blocks of the search's size; the outputs scored are the values rounded, so that the rate is
the reference's and the scoring's alone).

    python scripts/search-reference-rate.py [--function erfc] [--at 1.2345]
"""
from __future__ import annotations

import argparse
import time

import numpy as np


def rate(compute, x, repeat=3) -> float:
    best = float("inf")
    for _ in range(repeat):
        clock = time.perf_counter()
        compute(x)
        best = min(best, time.perf_counter() - clock)
    return x.shape[0] / best


def main() -> None:
    import flint

    from gelucheck.functions import get_function
    from gelucheck.reference.arbref import _ball, _precision
    from gelucheck.search.reference import Reference
    from gelucheck.search.score import fused_ulps
    from gelucheck.search.task import WHOLE_BLOCK

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--function", default="erfc")
    parser.add_argument("--at", type=float, default=1.2345)
    args = parser.parse_args()
    function = get_function(args.function)
    first = int(np.array([args.at]).view(np.uint64)[0])
    dense = np.arange(first, first + (1 << 20), dtype=np.uint64).view(np.float64)
    rng = np.random.default_rng(0)
    spread = np.sort(args.at * (1 + rng.random(1 << 16) * 2.0**-6))

    def arb120(x):
        with _precision(120):
            for v in x:
                _ball(function, float(v))

    def cold(x):
        fresh = Reference(function)
        fresh.values(x)
        cold.built = fresh.built

    reference = Reference(function)
    outputs = reference.values(dense)  # expansions built, numba loaded
    reference.values(spread)
    rounded = outputs.hi * 2.0 ** outputs.scale.astype(np.float64)
    error = np.empty(WHOLE_BLOCK)

    def scored(x):
        for a in range(0, x.shape[0], WHOLE_BLOCK):
            if not fused_ulps(reference, x[a:a + WHOLE_BLOCK], rounded[a:a + WHOLE_BLOCK],
                              error):
                raise SystemExit(f"{function.name} near {args.at}: the compiled scoring "
                                 "did not take it (numba missing, or values it leaves out)")
    rates = {
        "Arb, 120 bits, point by point": rate(arb120, dense[:20000]),
        "the search's Arb path (192 bits, double-double)": rate(
            lambda x: Reference(function).at_points(x), dense[:20000]),
        "expansions, 2^20 consecutive inputs": rate(reference.values, dense),
        "expansions, inputs spread over 2^-6 of a binade": rate(reference.values, spread),
        "a whole cell's value and error in one loop": rate(scored, dense),
        "the same, each segment built first (cold)": rate(cold, spread, repeat=1),
    }
    base = rates["Arb, 120 bits, point by point"]
    print(f"{function.name} near {args.at}, one core (python-flint {flint.__version__}):")
    for name, r in rates.items():
        print(f"  {name:50s} {r / 1e6:8.3f} M values/s  {r / base:7.1f}x Arb")
    print(f"  (cold: {cold.built} segments built for {spread.shape[0]:,} inputs)")


if __name__ == "__main__":
    main()

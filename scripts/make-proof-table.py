#!/usr/bin/env python3
"""Rewrite the table of proven inputs (gelucheck.sweep.proof_table, data/sweep_proofs.npz):
every float32 input that the sweep's reference leaves in doubt, for each sweepable function,
with Arb's proof (mpmath's without python-flint). Computes the reference of each block as
the sweep plans it - every block, closed-form spans too, since an implementation that differs
there has the reference computed - and proves each input in doubt afresh, the table unread.

    scripts/make-proof-table.py [FUNCTION ...] [--range START:STOP] [--out PATH] [--workers N]

FUNCTION: every sweepable function by default; the functions not named keep the entries the
file had. --range (hex encodings): a part of each function's inputs, for a test (the table
then holds only that part's). Needs numba: the doubts are those of the compiled loops (the
NumPy reference's wider bound leaves ten times as many)."""
import argparse
import multiprocessing
import sys
import time
from pathlib import Path

import numpy as np

from gelucheck.errors import GelucheckError
from gelucheck.functions import get_function, sweepable
from gelucheck.sweep import chunk, loops, proof_table, proofs, reference
from gelucheck.sweep.inputs import KNOWN_SPAN, encodings
from gelucheck.sweep.runner import parse_range, tasks


def _doubts(job: tuple[str, int, int]) -> list[tuple[int, int, int, int]]:
    """(x's encoding, float32, float64, side) of every input in doubt in [start, stop)."""
    name, start, stop = job
    function = get_function(name)
    with proofs.afresh() as proven:
        for a, b, known in chunk.block_plan(function, start, stop):
            step = KNOWN_SPAN if known else b - a
            for first in range(a, b, step):
                x = encodings(first, min(first + step, b)).view(np.float32)
                reference.values_and_doubts(function, x, monotone=True)
    return [(int(np.float32(x).view(np.uint32)), bits, bits64, proof_table.side_sign(side))
            for _, x, (bits, bits64, side) in proven]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("functions", nargs="*", metavar="FUNCTION")
    parser.add_argument("--range", help="START:STOP, hex encodings")
    parser.add_argument("--out", type=Path, default=proof_table.PATH)
    parser.add_argument("--workers", type=int, default=multiprocessing.cpu_count())
    args = parser.parse_args()
    choices = [f.name for f in sweepable()]
    names = args.functions or choices
    if unknown := sorted(set(names) - set(choices)):
        sys.exit(f"not sweepable: {', '.join(unknown)}; choose from {', '.join(choices)}")
    if loops.kernels() is None:
        sys.exit("needs numba (pip install 'gelucheck[fast]'): the table holds the compiled "
                 "loops' doubts")
    try:
        start, stop = parse_range(args.range)
        for name in names:  # (reference.require's check of the table: it is rewritten here)
            reference.module_of(get_function(name)).require(get_function(name))
    except GelucheckError as exc:
        sys.exit(str(exc))
    jobs = [(name, a, b) for name in names for a, b in tasks(start, stop)]  # the sweep's
    kept = {} if not args.out.exists() else {
        name: proven for name, proven in proof_table.table(args.out).items()
        if name not in names}
    begun = time.perf_counter()
    found: dict[str, list] = {name: [] for name in names}
    with multiprocessing.get_context("fork").Pool(args.workers) as pool:
        for (name, _, _), rows in zip(jobs, pool.imap(_doubts, jobs)):
            found[name] += rows
    for name, rows in found.items():
        rows.sort()
        columns = list(zip(*rows)) if rows else [[]] * len(proof_table.FIELDS)
        kept[name] = proof_table.Proven(*(np.array(c, dtype=dtype) for c, dtype
                                          in zip(columns, proof_table.FIELDS.values())))
        print(f"{name}: {len(rows):,} inputs proven")
    proof_table.write(kept, args.out)
    print(f"wrote {args.out} ({args.out.stat().st_size:,} bytes) in "
          f"{time.perf_counter() - begun:.0f} s")


if __name__ == "__main__":
    main()

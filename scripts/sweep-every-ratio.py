#!/usr/bin/env python3
"""Where every sweep stands against its implementation's own time: `gelucheck sweep --profile`
for each implementation of each sweepable function that the backends installed here offer,
one after another, and a Markdown table of what each profile says - the total CPU seconds per
2^24 inputs, the implementation's share and their ratio -, the highest ratio first, the ones
above LIMIT marked. The sweep's aim is 1.5x (docs/design.md, The sweep); these figures are the
ones to quote, since a profile read on its own says nothing of the others.

    scripts/sweep-every-ratio.py [--function F]... [--backend B]... [--range START:STOP]
                                 [--limit 1.5]

A sweep that fails is listed as failed, with its last line of error, and the script then exits
1; a backend not installed here is listed with the reason."""
import argparse
import re
import subprocess
import sys

from gelucheck.backends.registry import select
from gelucheck.errors import UsageError, refuse_repeats
from gelucheck.functions import get_function, sweepable
from gelucheck.sweep.runner import parse_range

# the profile's last figures line: "  total 0.0174 = 1.63 x the implementations' own time; ..."
TOTAL = re.compile(r"^  total ([\d.]+) = ([\d.]+) x the implementations' own time", re.M)
OWN = re.compile(r"^  \S+: implementation ([\d.]+), comparison", re.M)


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--function", action="append", choices=[f.name for f in sweepable()],
                        help="a function to sweep (repeatable; default: every sweepable one)")
    parser.add_argument("--backend", action="append",
                        help="a backend whose implementations to sweep (repeatable; default: all)")
    parser.add_argument("--range", help="START:STOP in hex, passed to each sweep (default: all)")
    parser.add_argument("--limit", type=float, default=1.5,
                        help="the ratio above which a sweep is marked (default: 1.5)")
    return parser.parse_args(argv)


def profile(spec: str, function: str, span: str | None) -> tuple[float, float, float] | str:
    """(total, the implementation's own, ratio) of one sweep's profile; else why not."""
    command = [sys.executable, "-m", "gelucheck", "sweep", "--backend", spec, "--function",
               function, "--profile", "--no-progress"] + (["--range", span] if span else [])
    done = subprocess.run(command, capture_output=True, text=True)
    total, own = TOTAL.search(done.stdout), OWN.search(done.stdout)
    if done.returncode != 0 or total is None or own is None:
        lines = (done.stderr or done.stdout).strip().splitlines() or ["no output"]
        return f"failed (exit {done.returncode}): {lines[-1]}"
    return float(total.group(1)), float(own.group(1)), float(total.group(2))


def main(argv: list[str]) -> int:
    args = parse(argv)
    functions = [get_function(f) for f in args.function] if args.function else sweepable()
    try:  # each refusal before the first sweep, as the sweep's own
        refuse_repeats("--function", args.function)
        refuse_repeats("--backend", args.backend)
        if args.range is not None:
            parse_range(args.range)
        chosen = select(args.backend, functions)  # an unknown backend: the valid names
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for name, why in chosen.unavailable:
        print(f"not here: {name} ({why})")
    rows, failed = [], []
    for impl in chosen.implementations:
        spec = f"{impl.backend}:{impl.name}"
        measured = profile(spec, impl.function.name, args.range)
        if isinstance(measured, str):
            failed.append((spec, impl.function.name, measured))
            said = measured
        else:
            rows.append((spec, impl.function.name, *measured))
            said = f"{measured[2]:.2f}x"
        print(f"{spec} {impl.function.name}: {said}", file=sys.stderr)  # as it goes
    print("\n| Sweep | Ratio | Total | Implementation |\n|---|---|---|---|")
    for spec, function, total, own, ratio in sorted(rows, key=lambda r: -r[4]):
        mark = f" (above {args.limit})" if ratio > args.limit else ""
        print(f"| {spec} {function} | {ratio:.2f}x{mark} | {total:.4f} | {own:.4f} |")
    for spec, function, why in failed:
        print(f"| {spec} {function} | {why} | not measured | not measured |")
    above = sum(r[4] > args.limit for r in rows)
    print(f"\n{len(rows)} sweeps measured, {above} above {args.limit}x; CPU seconds per 2^24 "
          "inputs" + (f"; {len(failed)} failed" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

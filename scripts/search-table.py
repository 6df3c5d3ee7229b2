#!/usr/bin/env python3
"""The table of docs/findings/float64-search.md for one or more backends: per float64
implementation and function, what `gelucheck search` finds beside the stored sample's figure
(`gelucheck check`) and the bound the library documents. Run it with the Python of the
environment that has the backend (JAX and TensorFlow live in their tox environments):

    .tox/jax/bin/python scripts/search-table.py jax [--evaluations 30000000]
    PYTHONPATH=src .tox/tensorflow/bin/python scripts/search-table.py tensorflow

Prints one Markdown row per implementation and function, as they come.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

FUNCTIONS = ("erf", "erfc", "phi", "gelu", "gelu_tanh", "phi_grad", "gelu_grad",
             "gelu_tanh_grad")


def _results(argv: list[str], folder: str) -> list:
    from gelucheck.report import jsonio

    out = Path(folder) / "out.json"
    out.unlink(missing_ok=True)
    done = subprocess.run([sys.executable, "-m", "gelucheck", *argv, "--json", str(out),
                           "--no-progress"], capture_output=True, text=True, env=os.environ)
    if not out.exists():  # no implementation of the function takes float64: said, skipped
        print(f"<!-- {' '.join(argv)}: {done.stderr.strip().splitlines()[-1:]} -->",
              flush=True)
        return []
    return jsonio.read(out)


def main() -> None:
    from gelucheck import published
    from gelucheck.results import AccuracyResult

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("backend", nargs="+")
    parser.add_argument("--evaluations", type=int, default=30_000_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--function", action="append", choices=FUNCTIONS,
                        help="only this function (repeatable; default: every one)")
    args = parser.parse_args()
    print("| implementation | function | search: at least (ulp) | at x | sample (ulp) | "
          "documented | signatures around it |\n|---|---|---|---|---|---|---|", flush=True)
    with tempfile.TemporaryDirectory() as folder:
        for backend in args.backend:
            for function in args.function or FUNCTIONS:
                sample = {(r.identity.backend, r.identity.implementation):
                          r.figures.max_ulp if r.figures else None
                          for r in _results(["check", "--backend", backend, "--function",
                                             function, "--dtype", "float64"], folder)
                          if isinstance(r, AccuracyResult)}
                for r in _results(["search", "--backend", backend, "--function", function,
                                   "--evaluations", str(args.evaluations), "--seed",
                                   str(args.seed)], folder):
                    who = (r.identity.backend, r.identity.implementation)
                    if r.figures is None:
                        print(f"| {r.identity.id} | {function} | ERROR | | | | |", flush=True)
                        continue
                    measured = sample.get(who)
                    bound = published.bound_for(r)
                    documented = ("-" if bound is None else f"{bound.max_ulp:g} "
                                  f"({bound.library}): {published.verdict(bound, r)}")
                    found = ("not measured" if r.diagnosis is None
                             else ", ".join(s.name for s in r.diagnosis) or "none")
                    print(f"| {r.identity.id} | {function} | {r.figures.max_ulp:.4g} | "
                          f"`{r.figures.worst_input_hex}` | "
                          f"{'not measured' if measured is None else f'{measured:.4g}'} | "
                          f"{documented} | {found} |", flush=True)


if __name__ == "__main__":
    main()

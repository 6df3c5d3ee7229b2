#!/usr/bin/env python3
"""How long a new user waits for README's first command: `gelucheck report`, cold (the
caches gelucheck's work fills empty: numba's compiled loops and Inductor's kernels, each in a
fresh folder; pip compiled the libraries' bytecode at install) and warm (the same caches
again), side by side with `gelucheck report --all` - what the report measured before
torch.compile's cases were left out of its default. (PYTHONPYCACHEPREFIX is left alone: with
it set, every run here took 19 s instead of 11, warm or not.)

    python scripts/first-report-time.py        # prints one line per run, then the table
"""
import os
import subprocess
import sys
import tempfile
import time


def timed(argv: list[str], caches: str) -> float:
    env = {**os.environ, "NUMBA_CACHE_DIR": os.path.join(caches, "numba"),
           "TORCHINDUCTOR_CACHE_DIR": os.path.join(caches, "inductor")}
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "gelucheck", "report", *argv], env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"gelucheck report {' '.join(argv)} failed ({done.returncode}): "
                 f"{done.stderr[-2000:]}")
    return seconds


def main() -> None:
    rows = []
    for argv in ([], ["--all"]):
        with tempfile.TemporaryDirectory(prefix="gelucheck-first-") as caches:
            cold = timed(argv, caches)
            warm = timed(argv, caches)
        label = "gelucheck report " + " ".join(argv)
        print(f"{label.strip()}: cold {cold:.1f} s, warm {warm:.1f} s", flush=True)
        rows.append((label.strip(), cold, warm))
    print("\n| command | cold (s) | warm (s) |\n|---|---|---|")
    for label, cold, warm in rows:
        print(f"| `{label}` | {cold:.1f} | {warm:.1f} |")


if __name__ == "__main__":
    main()

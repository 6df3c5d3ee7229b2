#!/usr/bin/env python3
"""How long a new user waits for README's first command, `gelucheck report`: until the first
figure is on the screen and until the report is whole, cold (the caches gelucheck's work fills
empty: numba's compiled loops, Inductor's and tinygrad's kernels, each in a fresh folder; pip
compiled the libraries' bytecode at install) and warm (the same caches again). Run on a
terminal (a pseudo-terminal here), as a user sees it. With --rev, the same for the code of
other git revisions (each from a worktree of its own), side by side in one run. The Python that
runs the script is the one measured, with what it has installed: a fresh venv of README's first
command measures what a new user gets.
(PYTHONPYCACHEPREFIX is left alone: with it set, every run took far longer, warm or not.)

    python scripts/first-report-time.py [--rev REV ...] [--all] [--repeat N]
"""
from __future__ import annotations

import argparse
import os
import pty
import re
import select
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# a row of figures: an implementation's name, then its function (either output's layout)
FIGURE = re.compile(rb"^\s*[a-z][\w.-]*:\S+\s+(gelu|phi|erf|erfc)\w*\s", re.M)


def timed(argv: list[str], caches: str, source: Path) -> tuple[float, float]:
    """(seconds until the first row of figures is printed, seconds until the end)."""
    env = {**os.environ, "NUMBA_CACHE_DIR": os.path.join(caches, "numba"),
           "TORCHINDUCTOR_CACHE_DIR": os.path.join(caches, "inductor"),
           "XDG_CACHE_HOME": os.path.join(caches, "xdg"), "COLUMNS": "120"}
    env["PYTHONPATH"] = str(source / "src")  # that tree's code, whatever pip installed
    main_fd, child_fd = pty.openpty()
    start = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-m", "gelucheck", "report", *argv], env=env,
                             stdin=subprocess.DEVNULL, stdout=child_fd, stderr=child_fd,
                             cwd=source)
    os.close(child_fd)
    seen, first = b"", None
    while True:
        ready, _, _ = select.select([main_fd], [], [], 1.0)
        if ready:
            try:
                chunk = os.read(main_fd, 65536)
            except OSError:  # the child closed the terminal
                chunk = b""
            if not chunk:
                break
            seen += chunk.replace(b"\r", b"\n")
            if first is None and FIGURE.search(seen):
                first = time.perf_counter() - start
        elif child.poll() is not None:
            break
    status = child.wait()
    total = time.perf_counter() - start
    os.close(main_fd)
    if status != 0:
        sys.exit(f"gelucheck report {' '.join(argv)} failed ({status}):\n"
                 f"{seen[-3000:].decode(errors='replace')}")
    return (first if first is not None else float("nan")), total


def worktree(rev: str, into: Path) -> Path:
    path = into / rev.replace("/", "_")
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(path), rev],
                   check=True)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rev", action="append", default=[],
                        help="also the code of this git revision (repeatable)")
    parser.add_argument("--all", action="store_true", help="gelucheck report --all")
    parser.add_argument("--repeat", type=int, default=3,
                        help="warm runs per revision, after the cold one (their median)")
    args = parser.parse_args()
    argv = ["--all"] if args.all else []
    rows = []
    with tempfile.TemporaryDirectory(prefix="gelucheck-first-") as scratch:
        sources = [("this tree", ROOT)]
        sources += [(rev, worktree(rev, Path(scratch))) for rev in args.rev]
        try:
            caches = {label: tempfile.mkdtemp(prefix="gelucheck-caches-", dir=scratch)
                      for label, _ in sources}
            runs: dict[str, list[tuple[float, float]]] = {label: [] for label, _ in sources}
            # the revisions take turns, run after run: this machine's speed drifts by tens of
            # percent within minutes, and a drift then weighs on every revision alike
            for turn in range(1 + args.repeat):
                for label, source in sources:
                    runs[label].append(timed(argv, caches[label], source))
                    first, whole = runs[label][-1]
                    print(f"{label}, {'cold' if turn == 0 else 'warm'}: first figures "
                          f"{first:.1f} s, whole report {whole:.1f} s", flush=True)
            for label, _ in sources:
                cold, *warm = runs[label]
                rows.append((label, cold, tuple(statistics.median(w[i] for w in warm)
                                                for i in (0, 1))))
        finally:
            for _, source in sources:
                if source != ROOT:
                    subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                                    str(source)], check=False)
    command = "gelucheck report " + " ".join(argv)
    print(f"\n`{command.strip()}` on a terminal, seconds (warm: the median of {args.repeat})"
          "\n\n| code | first figures cold | first figures warm | whole cold | whole warm |"
          "\n|---|---|---|---|---|")
    for label, cold, warm in rows:
        print(f"| {label} | {cold[0]:.1f} | {warm[0]:.1f} | {cold[1]:.1f} | {warm[1]:.1f} |")


if __name__ == "__main__":
    main()

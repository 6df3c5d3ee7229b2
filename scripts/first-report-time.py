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

    python scripts/first-report-time.py [--rev REV ...] [--all]
"""
from __future__ import annotations

import argparse
import os
import pty
import re
import select
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
    args = parser.parse_args()
    argv = ["--all"] if args.all else []
    rows = []
    with tempfile.TemporaryDirectory(prefix="gelucheck-first-") as scratch:
        sources = [("this tree", ROOT)]
        sources += [(rev, worktree(rev, Path(scratch))) for rev in args.rev]
        try:
            for label, source in sources:
                with tempfile.TemporaryDirectory(prefix="gelucheck-caches-") as caches:
                    cold = timed(argv, caches, source)
                    warm = timed(argv, caches, source)
                print(f"{label}: first figures {cold[0]:.1f} s cold, {warm[0]:.1f} s warm; "
                      f"whole report {cold[1]:.1f} s cold, {warm[1]:.1f} s warm", flush=True)
                rows.append((label, cold, warm))
        finally:
            for _, source in sources:
                if source != ROOT:
                    subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                                    str(source)], check=False)
    command = "gelucheck report " + " ".join(argv)
    print(f"\n`{command.strip()}` on a terminal, seconds\n\n| code | first figures cold | "
          "first figures warm | whole cold | whole warm |\n|---|---|---|---|---|")
    for label, cold, warm in rows:
        print(f"| {label} | {cold[0]:.1f} | {warm[0]:.1f} | {cold[1]:.1f} | {warm[1]:.1f} |")


if __name__ == "__main__":
    main()

"""A small progress bar on stderr: redrawn in place on a terminal, a line per 10% elsewhere."""
from __future__ import annotations

import sys
import time


class Progress:
    def __init__(self, total: int, label: str, stream=None, enabled: bool = True):
        self.total = max(total, 1)
        self.label = label
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.done = 0
        self.start = time.perf_counter()
        self._tty = getattr(self.stream, "isatty", lambda: False)()
        self._last_decile = -1

    def advance(self, count: int = 1) -> None:
        self.done += count
        if not self.enabled:
            return
        fraction = self.done / self.total
        elapsed = time.perf_counter() - self.start
        eta = elapsed * (1 - fraction) / fraction if fraction else float("nan")
        if self._tty:
            bar = "#" * int(30 * fraction)
            self.stream.write(f"\r{self.label} [{bar:<30}] {fraction:6.1%} "
                              f"{elapsed:6.1f}s ETA {eta:5.0f}s")
        elif int(fraction * 10) > self._last_decile:
            self._last_decile = int(fraction * 10)
            self.stream.write(f"{self.label}: {fraction:.0%} after {elapsed:.1f}s, "
                              f"ETA {eta:.0f}s\n")
        self.stream.flush()

    def close(self) -> float:
        elapsed = time.perf_counter() - self.start
        if self.enabled and self._tty:
            self.stream.write("\n")
        return elapsed

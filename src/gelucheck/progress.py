"""Progress bars: tqdm, on stderr, with the settings every long step of gelucheck shares."""
from __future__ import annotations

import sys

from tqdm import tqdm


def bar(total: int, label: str, enabled: bool = True, unit: str = "it") -> tqdm:
    """A bar that advances with ``update(n)`` and ends with ``close()``; off when not enabled.
    Off a terminal (a CI log) it redraws at most every 30 s, so logs stay short."""
    tty = sys.stderr.isatty()
    return tqdm(total=total, desc=label, disable=not enabled, unit=unit, unit_scale=True,
                dynamic_ncols=True, mininterval=0.2 if tty else 30, leave=False)

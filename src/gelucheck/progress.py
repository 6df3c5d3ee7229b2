"""Progress bars: tqdm, on stderr, with the settings every long step of gelucheck shares."""
from __future__ import annotations

import sys

from tqdm import tqdm


def bar(total: int, label: str, enabled: bool = True, unit: str = "it") -> tqdm:
    """A bar that advances with ``update(n)`` and ends with ``close()``; off when not enabled.
    A bar belongs on a terminal: off one (a CI log, a file) the step is said in one line
    instead of a bar's redrawn frames."""
    tty = sys.stderr.isatty()
    if enabled and not tty and total:
        print(f"{label}: {total:,} {unit}{'s' if total != 1 else ''} ...", file=sys.stderr,
              flush=True)
    return tqdm(total=total, desc=label, disable=not (enabled and tty), unit=unit,
                unit_scale=True, dynamic_ncols=True, mininterval=0.2, leave=False)

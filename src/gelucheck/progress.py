"""Progress bars: tqdm, on stderr, with the settings every long step of gelucheck shares."""
from __future__ import annotations

from tqdm import tqdm


def bar(total: int, label: str, enabled: bool = True, unit: str = "it") -> tqdm:
    """A bar that advances with ``update(n)`` and ends with ``close()``; off when not enabled.
    Off a terminal it redraws at most every 10 s, so logs stay short."""
    return tqdm(total=total, desc=label, disable=not enabled, unit=unit, unit_scale=True,
                dynamic_ncols=True, mininterval=0.2, maxinterval=10, leave=False)

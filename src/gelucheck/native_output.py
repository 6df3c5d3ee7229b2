"""What native code writes on a file descriptor, out of Python's reach (``sys.stdout`` and
``sys.stderr`` do not see C's writes): oneDNN's verbose log, LiteRT's delegate messages."""
from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable


def captured(fn: Callable[[], object], fd: int = 1) -> str:
    """What is written on ``fd`` (1: stdout, 2: stderr) while ``fn`` runs, kept off it."""
    (sys.stdout if fd == 1 else sys.stderr).flush()
    with tempfile.TemporaryFile() as sink:
        saved = os.dup(fd)
        os.dup2(sink.fileno(), fd)
        try:
            fn()
        finally:
            os.dup2(saved, fd)
            os.close(saved)
        sink.seek(0)
        return sink.read().decode(errors="replace")

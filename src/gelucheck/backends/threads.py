"""Whether a backend's own thread pool may use every core (its default) or one thread, where
gelucheck runs one process per core (a sweep's or a search's workers) - what torch's
set_num_threads(1) does there, for the libraries that start a pool per session or compiled
model: ONNX Runtime and OpenVINO read it when they make one. Their kernels here are
elementwise, each output from its own input, so no figure depends on it; the time does: two
workers on two cores, each with a pool of two spinning threads, had the sweep's own passes
wait for the cores (docs/design.md, The sweep)."""
from __future__ import annotations

_one_thread = False


def one_thread() -> bool:
    """Whether sessions and models made now should run on the calling thread alone."""
    return _one_thread


def set_one_thread(on: bool) -> bool:
    """Sessions and models made from now on run on one thread (``on``) or on the library's
    default pool; returns the setting before, for the caller to restore."""
    global _one_thread
    before, _one_thread = _one_thread, on
    return before

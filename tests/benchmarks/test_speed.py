"""Speed of every available implementation × dtype × size, next to two baselines per group:
a copy of the input (the memory-bandwidth floor) and ReLU.

Groups are (function, dtype, size), so each comparison table sets implementations side by
side. extra_info carries elements/s, bytes/s and the ratio to the copy baseline, which
`gelucheck bench compare` judges across runs (an absolute median moves with the machine's
load; the ratio to a baseline timed in the same run moves far less). Sizes have ids that
filter cleanly: `-k n1e3` is 10^3 only. Compilers are timed warmed up, both compiled for
dynamic shapes (what gelucheck measures accuracy with) and for the one static shape.

GELUCHECK_BENCH_SLOWDOWN=K (a whole number) makes every implementation do its work K times:
a planted slowdown, to show that a comparison flags it.
"""
import os
import time
from functools import cache

import numpy as np
import pytest

from gelucheck.backends import select
from gelucheck.formats import FORMATS, get_format
from gelucheck.functions import FUNCTIONS

SIZES = [10**3, 10**5, 10**7]
CUDA_SIZES = [*SIZES, 10 ** 8]
SLOWDOWN = int(os.environ.get("GELUCHECK_BENCH_SLOWDOWN", "1"))


def size_id(size: int) -> str:
    return f"n1e{len(str(size)) - 1}"


@cache
def inputs(dtype: str, size: int) -> np.ndarray:
    rng = np.random.default_rng(size)
    return np.asarray(rng.uniform(-10, 10, size), dtype=get_format(dtype).dtype)


def _baselines():
    """copy and ReLU on NumPy arrays, the same for every function's group."""
    return {"copy": lambda x: x.copy(), "relu": lambda x: np.maximum(x, np.zeros((), x.dtype))}


@cache
def copy_seconds(dtype: str, size: int) -> float:
    """Median time of a copy, for the ratio in extra_info (measured once per group, warm)."""
    x = inputs(dtype, size)
    for _ in range(3):
        x.copy()
    times = []
    for _ in range(15):
        start = time.perf_counter()
        x.copy()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def _cases():
    chosen = select()
    out = [pytest.param(None, None, None, None, marks=pytest.mark.skip(
        reason=f"backend {n}: {why}"), id=f"{n}-unavailable")
        for n, why in chosen.unavailable]
    for impl in chosen.implementations:
        sizes = CUDA_SIZES if impl.device == "cuda" else SIZES
        variants = ["dynamic", "static"] if impl.prepare_static else [None]
        for fmt in impl.dtypes:
            for size in sizes:
                for variant in variants:
                    name = impl.id + (f"[{variant}]" if variant else "")
                    out.append(pytest.param(impl, variant, fmt.name, size, id=(
                        f"{name}-{impl.function.name}-{fmt.name}-{size_id(size)}")))
    for function in FUNCTIONS:
        for base in _baselines():
            for dtype in FORMATS:
                for size in SIZES:
                    out.append(pytest.param(base, None, dtype, size, id=(
                        f"baseline:{base}-{function}-{dtype}-{size_id(size)}")))
    return out


def _extra(benchmark, dtype, size):
    seconds = benchmark.stats.stats.median
    itemsize = get_format(dtype).bits // 8
    benchmark.extra_info.update({
        "elements_per_s": size / seconds, "bytes_per_s": 2 * itemsize * size / seconds,
        "ratio_to_copy": seconds / copy_seconds(dtype, size), "slowdown": SLOWDOWN})


def _timed(impl, variant, x):
    if variant == "static":
        return impl.prepare_static(x)
    return impl.timed_call(x)


@pytest.mark.parametrize("impl, variant, dtype, size", _cases())
def test_speed(benchmark, impl, variant, dtype, size, request):
    x = inputs(dtype, size)
    if isinstance(impl, str):  # a baseline, shown in the group of the function in its id
        function = request.node.callspec.id.split("-")[1]
        fn, arg = _baselines()[impl], x
    else:
        function = impl.function.name
        fn, arg = _timed(impl, variant, x)
        if SLOWDOWN > 1:
            once = fn
            fn = lambda a: [once(a) for _ in range(SLOWDOWN)][-1]
    benchmark.group = f"{function} {dtype} {size_id(size)}"
    sync = getattr(impl, "synchronize", None)
    run = fn if sync is None else (lambda a: (fn(a), sync()))
    run(arg)  # warm-up: compiles (static or dynamic) and first-touch allocations stay untimed
    benchmark(run, arg)
    _extra(benchmark, dtype, size)

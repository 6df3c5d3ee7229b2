"""Same input, same output (docs/design.md, Consistency across call paths): each input
evaluated along other paths than one long contiguous array - alone, at every position of
short arrays of every length up to two vector widths and one, in non-contiguous layouts,
through other call paths - and compared bit for bit with the bulk result, the baseline.

How each path is reached. A single element is a call on a one-element array (and on a 0-d
array). Short arrays of length L are separate arrays, one call each (on one input in SHARE,
below). Where the implementation says the kernel takes the same
path for the rows of a padded 2-D view (``Implementation.rows_batch``: NumPy's ufunc loops),
they are batched that way instead (checks.padded_rows), and a test holds the batched result
to separate calls; torch's TensorIterator does not (it takes a strided loop for such a view, and
gives other results), so torch is called array by array. Layouts are built on the
framework's side (a strided, transposed, channels-last or offset view of a larger tensor) and
handed to the kernel as they are. Backends add their own paths through
``Implementation.paths``.
"""
from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from ..backends import Implementation, ImplementationError
from ..formats import Format, narrow
from ..results import ConsistencyResult, Failure, PathFigures
from ..ulp import ulp_error
from . import reference_data
from .padded_rows import MAX_LENGTH, padded_rows

EXAMPLES = 3
# Short arrays and 0-d calls take one call per array, and there are 2W lengths: each length
# (and the 0-d path) gets one input in SHARE, a different one for each length (offset
# length mod SHARE), so that every input still meets several lengths and positions while
# the whole 16-bit matrix stays within minutes. Alone, in every layout and call path, and in
# the bulk, every input is evaluated.
SHARE = 8


def subset(name: str) -> slice:
    """Which inputs a path is evaluated on (see SHARE)."""
    if name.startswith("length-"):
        return slice(int(name.split("-")[1]) % SHARE, None, SHARE)
    if name == "0-d":
        return slice(0, None, SHARE)
    return slice(None)


def separately(kernel: Callable, x: np.ndarray, length: int) -> np.ndarray:
    """Every input once, in consecutive separate arrays of exactly ``length`` (the last one
    completed with x[0]): one call each. Input i sits at position i mod length."""
    padded = np.concatenate([x, np.repeat(x[:1], -len(x) % length)])
    out = np.empty_like(padded)
    for start in range(0, len(padded), length):
        out[start:start + length] = kernel(padded[start:start + length].copy())
    return out[:len(x)]


def _batched(impl: Implementation, fmt: Format, x: np.ndarray, length: int) -> np.ndarray:
    wide = impl.wider.get(fmt)
    view, n = padded_rows(x, length, wide.dtype if wide else None)
    with np.errstate(all="ignore"):  # as Implementation calls kernels: overflow is data
        out = np.asarray(impl.kernel(view))
    return (narrow(out, fmt) if wide else out).reshape(-1)[:n]


def _zero_d(kernel: Callable, x: np.ndarray) -> np.ndarray:
    out = np.empty_like(x)
    for i in range(len(x)):
        out[i] = kernel(x[i:i + 1].copy().reshape(()))  # a 0-d array (a 0-d tensor in torch)
    return out


def _shaped(kernel: Callable, x: np.ndarray, *tail: int) -> np.ndarray:
    """The bulk as one contiguous array of shape (-1, *tail), padded with x[0]: an innermost
    dimension of 1 or of an odd size, or a 3-D array, is what compiled kernels specialise
    on."""
    padded = np.concatenate([x, np.repeat(x[:1], -len(x) % int(np.prod(tail)))])
    return np.asarray(kernel(padded.reshape(-1, *tail))).reshape(-1)[:len(x)]


def generic_paths(impl: Implementation, fmt: Format, lengths: bool = True) -> dict:
    """name -> callable(x) -> outputs, for the paths every implementation has."""
    paths: dict[str, Callable[[np.ndarray], np.ndarray]] = {
             "one-element": lambda x: separately(impl, x, 1),
             "0-d": lambda x: _zero_d(impl, x),
             "inner-1": lambda x: _shaped(impl, x, 1), "inner-7": lambda x: _shaped(impl, x, 7),
             "3-d": lambda x: _shaped(impl, x, 3, 5)}
    if lengths:
        for n in range(2, MAX_LENGTH[fmt.name] + 1):
            paths[f"length-{n}"] = functools.partial(
                _batched, impl, fmt, length=n) if impl.rows_batch else functools.partial(
                separately, impl, length=n)
    return paths


def _same(a: np.ndarray, b: np.ndarray, fmt: Format) -> np.ndarray:
    return fmt.bits_of(a) == fmt.bits_of(b)


def check(impl: Implementation, fmt: Format, inputs: np.ndarray | None = None,
          lengths: bool = True) -> ConsistencyResult:
    """Every path of ``impl`` against its bulk result on the stored inputs of ``fmt`` (or on
    ``inputs``): per path, how many outputs differ bit for bit, the largest difference in
    ulps of the bulk output, examples, and the path's own worst ulp error."""
    function = impl.reference_function
    tab = reference_data.table(fmt, function)
    x = tab.x if inputs is None else inputs
    from ..backends import identity

    result = ConsistencyResult(identity(impl, fmt))
    if inputs is None:
        exact = reference_data.exact(tab, function)
    else:
        index = np.searchsorted(tab.x.astype(np.float64), x.astype(np.float64))
        exact = reference_data.exact(tab, function)[index]
    try:
        base = impl(x)
    except ImplementationError as exc:
        result.failure = Failure(str(exc))
        return result
    base_err = ulp_error(base, exact, fmt)
    result.bulk_max_ulp = float(np.max(np.where(np.isnan(base_err), 0, base_err)))
    paths = generic_paths(impl, fmt, lengths)
    if impl.paths is not None:
        paths.update(impl.paths(fmt))
    for name, run in paths.items():
        part = subset(name)
        xs, bs, es, be = x[part], base[part], exact[part], base_err[part]
        try:
            with np.errstate(all="ignore"):
                y = np.asarray(run(xs)).astype(fmt.dtype)
        except Exception as exc:  # noqa: BLE001 - a path that fails is a finding about it
            result.paths.append(PathFigures(name, len(xs),
                                            error=f"{type(exc).__name__}: {exc}"))
            continue
        differ = ~_same(y, bs, fmt)
        err = ulp_error(y, es, fmt)
        between = ulp_error(y, _as_exact(bs), fmt)
        idx = np.flatnonzero(differ)
        worst = idx[np.argsort(-np.nan_to_num(between[idx], posinf=np.inf), kind="stable")]
        result.paths.append(PathFigures(
            name, len(xs), n_differ=int(differ.sum()),
            max_ulp_difference=float(np.max(between[idx])) if idx.size else 0.0,
            max_ulp=float(np.max(np.where(np.isnan(err), 0, err))),
            examples=[{"x": float(xs[i]), "x_hex": fmt.hex(xs[i]), "bulk": float(bs[i]),
                       "path": float(y[i]), "bulk_ulp": float(be[i]),
                       "path_ulp": float(err[i])} for i in worst[:EXAMPLES]]))
    return result


def _as_exact(values: np.ndarray):
    """A computed output as the 'exact' value it is compared against: representable, so a
    zero residual signed like it."""
    from ..ulp import Exact

    a = values.astype(np.float64)
    return Exact(a, np.copysign(0.0, a))


def _case(spec: tuple[str, str, str]) -> ConsistencyResult:
    """One (implementation id, function, dtype) case, in a worker process."""
    from ..backends import find
    from ..formats import get_format

    impl_id, function, dtype = spec
    impl = find(impl_id, function)[0]
    return check(impl, get_format(dtype))


def run(impls: list[Implementation], dtypes: list[Format], workers: int = 1,
        progress: bool = True) -> list[ConsistencyResult]:
    """Every implementation x dtype, spread over ``workers`` processes (each one case at a
    time: a path's own threads stay as the framework sets them)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from ..progress import bar as progress_bar

    cases = [(i, d) for i in impls for d in dtypes if d in i.dtypes]
    # the longest cases first (compiled, then backward passes, then torch's per-call paths),
    # so that the workers finish together; results keep the order asked for
    order = sorted(range(len(cases)), key=lambda k: (
        cases[k][0].backend != "torch-compile", cases[k][0].function.derivative_of is None,
        cases[k][0].rows_batch))
    bar = progress_bar(len(cases), "consistency", progress, unit="case")
    out = []
    if workers <= 1 or any(i.backend == "user" for i, _ in cases):
        for impl, fmt in cases:
            out.append(check(impl, fmt))
            bar.update()
    else:
        specs = [(cases[k][0].id, cases[k][0].function.name, cases[k][1].name) for k in order]
        ctx = multiprocessing.get_context("spawn")
        done: dict[int, ConsistencyResult] = {}
        with ProcessPoolExecutor(workers, mp_context=ctx) as pool:
            for k, result in zip(order, pool.map(_case, specs)):
                done[k] = result
                bar.update()
        out = [done[k] for k in range(len(cases))]
    bar.close()
    return out

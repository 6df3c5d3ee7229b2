"""The whole measurement of implementations × dtypes: accuracy (with the minimum and the
special inputs) and tanh drift, as a list of JSON-ready results."""
from __future__ import annotations

from .backends import Implementation, backend_names, get_backend
from .checks import accuracy, drift, minimum, specials
from .progress import Progress


def evaluate(impl: Implementation, dtype: str) -> dict:
    """The accuracy result of one implementation in one dtype, minimum and specials included."""
    result = accuracy.measure(impl, dtype)
    # which release (and CPU kernels) the figures belong to, for comparing environments
    result["backend_version"] = (get_backend(impl.backend).version
                                 if impl.backend in backend_names() else None)
    if result["error"] is None:
        result["minimum"] = minimum.check(impl, dtype)
        result["specials"] = specials.check(impl, dtype)
    return result


def cases(impls: list[Implementation], dtypes: list[str]) -> list[tuple[Implementation, str]]:
    return [(i, d) for i in impls for d in dtypes if d in i.dtypes]


def run(impls: list[Implementation], dtypes: list[str], with_drift: bool = True,
        progress: bool = True) -> list[dict]:
    todo = cases(impls, dtypes)
    pairs = drift.pairs(impls) if with_drift else []
    bar = Progress(len(todo) + len(pairs) * len(dtypes), "measuring", enabled=progress)
    results = []
    for impl, dtype in todo:
        results.append(evaluate(impl, dtype))
        bar.advance()
    if with_drift:
        for dtype in dtypes:
            results.append(drift.reference_drift(dtype))
            for exact, tanh in pairs:
                if dtype in tanh.dtypes and (exact is None or dtype in exact.dtypes):
                    results.append(drift.backend_drift(exact, tanh, dtype))
                bar.advance()
    bar.close()
    return results

"""What the sweep's test modules share: the functions the fast reference covers, the blocks
of its closed-form parts, errors measured by mpmath, an implementation that returns given
outputs, typed sweep statistics as plain dicts (for tests that compare two of them
after dropping what may differ: timings, sums to float64's rounding), and the order in which
a command starts the fork server."""
import dataclasses
import math

import mpmath
import numpy as np

from gelucheck.checks import reference_data
from gelucheck.formats import FLOAT32
from gelucheck.sweep import fastref, reference
from gelucheck.sweep.stats import ChunkStats, Figures, ImplFailure, ImplStats

FUNCTIONS = ("phi", "gelu", "gelu_tanh", "phi_grad", "gelu_grad", "gelu_tanh_grad")


def size(function, x, exact):
    """What the bound is relative to: the value, or - for the derivatives, whose terms cancel
    at x* - the size of their terms (docs/design.md, The sweep)."""
    from gelucheck.functions import get_function

    f = get_function(function)
    size = fastref.SMOOTH[f](x.astype(np.float64))[1] if f in fastref.SMOOTH else np.abs(exact)
    return np.maximum(size, FLOAT32.smallest_normal)


def mp_errors(function, x, y):
    """|y - f(x)| in float32 ulps of the exact value, from mpmath alone."""
    return np.array([float(e) for e in mp_exact_errors(function, x, y)])


def mp_exact_errors(function, x, y, digits=60):
    """mp_errors as mpmath numbers of ``digits`` digits: 1 - 2^-140 is not 1."""
    from gelucheck.functions import get_function

    f = get_function(function)
    out = []
    with mpmath.workdps(digits):
        for xi, yi in zip(x.tolist(), y.tolist()):
            exact = f.mp(mpmath.mpf(xi))
            e = max(int(mpmath.floor(mpmath.log(abs(exact), 2))), -126)
            out.append(abs(mpmath.mpf(yi) - exact) / mpmath.ldexp(1, e - 23))
    return out


class Returns:
    """An implementation that returns what it is given, computed once (for evaluate_block)."""

    def __init__(self, function, y):
        from gelucheck.functions import get_function

        self.id, self.function, self.y = "test:returns", get_function(function), y

    def __call__(self, x, intact=None):
        assert intact is None or intact(x)
        return self.y.copy()


# Blocks wholly in the far left (x <= -20; the tanh form's from -12) or in the right part
# (x > 9; φ's from 20): just past -20 and 20, and the largest binade.
EXACT_PART_BLOCKS = {"far": 0xC1A00000 + 0x40000, "right": 0x41A00000 + 0x40000,
                     "huge": 0x7F000000}


# Blocks near zero, where the results and errors follow Taylor's first term: x near 2^-40,
# x from -2^-40 (GELU's exact value lies below the power of two x/2 there: half the unit),
# x near -2^-100 and 2^-120 (float64 loses GELU's x² term against x/2), and the last binade
# below 2^-26 (the reference is float64 SciPy there), from its power of two on both sides
TINY_BLOCKS = {"tiny": 0x2B810000, "tiny-power": 0xAB800000, "tiny-deep": 0x8D030000,
               "tiny-deepest": 0x04000000, "tiny-top": 0x327E0000, "tiny-top-power": 0xB2000000,
               "tiny-top-positive-power": 0x32000000}


def known_tiny_edge(function):
    from gelucheck.functions import get_function

    return int(np.float32(reference.spec(get_function(function)).known_tiny).view(np.uint32))


def window_around_minimum():
    tab = reference_data.table("float32", "gelu")
    start = int(FLOAT32.bits_of(np.float32(-0.7517915)))
    lo, hi = start - 2000, start + 2000  # inside the stored window of 4,097 values
    x = FLOAT32.from_bits(np.arange(lo, hi, dtype=np.uint32))
    index = np.searchsorted(tab.x.astype(np.float64), x.astype(np.float64)[::-1])
    assert np.array_equal(tab.x[index], x[::-1])
    return lo, hi


def plain(value):
    """A ChunkStats, ImplStats, ImplFailure or Figures as dicts: an implementation's whole
    figures at its top level beside its regions and histogram (a list); its exact and
    computed values left out where they were not set (NaN, which equals nothing), and the
    timings (which never agree) everywhere."""
    if isinstance(value, ChunkStats):
        out = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        out["implementations"] = {k: plain(v) for k, v in value.implementations.items()}
        del out["reference_s"], out["task_s"]
        return out
    if isinstance(value, ImplFailure):
        return {"error": value.error}
    if isinstance(value, ImplStats):
        out = dataclasses.asdict(value)
        whole = out.pop("whole")
        out["histogram"] = list(out["histogram"])
        for key in ("exact", "computed"):
            if math.isnan(out[key]):
                del out[key]
        for key in ("eval_s", "check_s", "guard_s"):
            del out[key]
        return {**whole, **out}
    if isinstance(value, Figures):
        return dataclasses.asdict(value)
    raise TypeError(f"not sweep statistics: {value!r}")


def fork_server_then(monkeypatch, module, name: str) -> list:
    """What a command does, in order: each start of the sweep's fork server (the modules it
    would preload; none is started) and then the call of ``module.name``, which stops the
    command there with a usage error."""
    from gelucheck.errors import UsageError
    from gelucheck.sweep import runner

    calls: list = []
    monkeypatch.setattr(runner, "_fork_server", calls.append)

    def stop(*args):
        calls.append(name)
        raise UsageError("stopped here")

    monkeypatch.setattr(module, name, stop)
    return calls

"""What every backend offers: named implementations of a function, and how each computes."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..formats import FORMATS, get_format, narrow

ALL_DTYPES = tuple(FORMATS)


class ImplementationError(Exception):
    """An implementation raised, or returned the wrong dtype or shape."""


@dataclass(frozen=True)
class Implementation:
    """One way a backend computes one function.

    ``kernel`` maps a NumPy array of the compute dtype to an array of the same dtype and shape.
    Dtypes in ``native`` go straight in; a dtype in ``wider`` is converted (exactly) to the
    wider dtype named there, computed, and rounded once back (``formats.narrow``).
    """

    backend: str
    name: str
    function: str
    kernel: Callable[[np.ndarray], np.ndarray]
    native: tuple[str, ...] = ALL_DTYPES
    wider: dict[str, str] = field(default_factory=dict)
    device: str = "cpu"
    description: str = ""
    # For a stand-in such as quick_gelu: the function it approximates, measured as drift only.
    approximates: str | None = None
    # For benchmarks: turn a NumPy input into (callable, native argument), so that the timing
    # leaves out the conversions the accuracy adapter makes; and wait for an asynchronous
    # device. By default the whole adapter is timed.
    prepare: Callable[[np.ndarray], tuple[Callable, object]] | None = None
    synchronize: Callable[[], None] | None = None

    def timed_call(self, x: np.ndarray) -> tuple[Callable, object]:
        """(callable, argument) whose call is what a benchmark times, in the user's dtype."""
        if self.prepare is not None and x.dtype.name in self.native:
            return self.prepare(x)
        return self, x

    @property
    def id(self) -> str:
        return f"{self.backend}:{self.name}"

    @property
    def dtypes(self) -> tuple[str, ...]:
        return tuple(d for d in ALL_DTYPES if d in self.native or d in self.wider)

    def how(self, dtype: str) -> str:
        if dtype in self.native:
            return "native"
        if dtype in self.wider:
            return f"in {self.wider[dtype]}, rounded once"
        return "unsupported"

    def __call__(self, x: np.ndarray) -> np.ndarray:
        fmt = get_format(x.dtype.name)
        if fmt.name in self.native:
            out = self._run(x)
        elif fmt.name in self.wider:
            wide = self._run(x.astype(get_format(self.wider[fmt.name]).dtype))
            out = narrow(wide, fmt)
        else:
            raise ImplementationError(f"{self.id} does not take {fmt.name}; it takes "
                                      f"{', '.join(self.dtypes)}")
        return out

    def _run(self, x: np.ndarray) -> np.ndarray:
        try:
            with np.errstate(all="ignore"):
                out = self.kernel(x)
        except Exception as exc:
            raise ImplementationError(f"{self.id} raised {type(exc).__name__}: {exc}") from exc
        out = np.asarray(out)
        if out.shape != x.shape:
            raise ImplementationError(f"{self.id} returned shape {out.shape} for input shape "
                                      f"{x.shape}")
        if out.dtype != x.dtype:
            raise ImplementationError(f"{self.id} returned {out.dtype} for {x.dtype} input")
        return out


@dataclass(frozen=True)
class Backend:
    """A family of implementations (numpy, scipy, torch, ...), available or not and why."""

    name: str
    available: bool
    reason: str  # why not, when unavailable
    version: str | None
    implementations: tuple[Implementation, ...] = ()
    # Implementations known not to exist here, with the reason (e.g. NumPy has no erf).
    unavailable: dict[str, str] = field(default_factory=dict)

"""What every backend offers: named implementations of a function, and how each computes."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..errors import ImplementationError
from ..formats import FORMATS, Format, get_format, narrow
from ..functions import Function, get_function
from ..tiers import Tier

ALL_DTYPES = tuple(FORMATS.values())


def warm_up_on_a_few_inputs(kernel: Callable[[np.ndarray], np.ndarray]
                             ) -> Callable[[Format], None]:
    """An Implementation's ``warm_up`` for a compiler: one call on 8 inputs of the dtype,
    which compiles what the backend compiles for it."""
    def warm_up(fmt: Format) -> None:
        kernel(np.linspace(-4, 4, 8).astype(fmt.dtype))

    return warm_up


@dataclass(frozen=True)
class Implementation:
    """One way a backend computes one function.

    ``kernel`` maps a NumPy array of the compute dtype to an array of the same dtype and shape.
    Dtypes in ``native`` go straight in; a dtype in ``wider`` is converted (exactly) to the
    wider dtype named there, computed, and rounded once back (``formats.narrow``). Backends
    name functions and dtypes as strings; they are resolved to objects here, once.
    """

    backend: str
    name: str
    function: Function
    kernel: Callable[[np.ndarray], np.ndarray]
    native: tuple[Format, ...] = ALL_DTYPES  # names are resolved to Formats, once
    wider: dict[Format, Format] = field(default_factory=dict)
    device: str = "cpu"
    description: str = ""
    # For a stand-in such as quick_gelu: the function it approximates, measured as drift only.
    approximates: Function | None = None
    # The formula it should fingerprint as, where its function does not say (a stand-in):
    # a candidate of checks.fingerprint, e.g. "sigmoid_1.702".
    formula: str | None = None
    # For benchmarks: turn a NumPy input into (callable, native argument), so that the timing
    # leaves out the conversions the accuracy adapter makes; and wait for an asynchronous
    # device. By default the whole adapter is timed.
    prepare: Callable[[np.ndarray], tuple[Callable, object]] | None = None
    # For benchmarks of a compiler: the same computation compiled for one static shape (the
    # accuracy kernel may be compiled for dynamic shapes), prepared as ``prepare`` does.
    prepare_static: Callable[[np.ndarray], tuple[Callable, object]] | None = None
    # For compilers: compile for a dtype ahead of measuring, so that the compile time is
    # reported apart from the measuring time (measurement.run).
    warm_up: Callable[[Format], None] | None = None
    synchronize: Callable[[], None] | None = None
    # For code outside any backend (a user's callable): what identifies this version of it.
    version: str | None = None
    # The framework's other paths to the same outputs, for the consistency check: a callable
    # taking the Format and returning {name: callable(x) -> outputs} (checks.consistency).
    paths: Callable | None = None
    # Whether rows of a padded 2-D view take the kernel's path for arrays of their length
    # (NumPy ufuncs: yes; torch's TensorIterator: no - it takes a strided loop): then short
    # arrays are checked batched, else one call per array (gelucheck.checks.padded_rows).
    rows_batch: bool = False

    def __post_init__(self):
        resolve = lambda name, value: object.__setattr__(self, name, value)
        resolve("function", get_function(self.function))
        if self.approximates is not None:
            resolve("approximates", get_function(self.approximates))
        resolve("native", tuple(get_format(d) for d in self.native))
        resolve("wider", {get_format(a): get_format(b) for a, b in self.wider.items()})

    @property
    def reference_function(self) -> Function:
        """What the outputs are measured against: the function, or the one a stand-in
        approximates."""
        return self.approximates or self.function

    def timed_call(self, x: np.ndarray) -> tuple[Callable, object]:
        """(callable, argument) whose call is what a benchmark times, in the user's dtype."""
        if self.prepare is not None and get_format(x.dtype) in self.native:
            return self.prepare(x)
        return self, x

    @property
    def id(self) -> str:
        return f"{self.backend}:{self.name}"

    @property
    def dtypes(self) -> tuple[Format, ...]:
        return tuple(f for f in FORMATS.values() if f in self.native or f in self.wider)

    def how(self, fmt: Format) -> str:
        if fmt in self.native:
            return "native"
        if fmt in self.wider:
            return f"in {self.wider[fmt].name}, rounded once"
        return "unsupported"

    def __call__(self, x: np.ndarray,
                 intact: Callable[[np.ndarray, object], bool] | None = None) -> np.ndarray:
        """The outputs for ``x``, which is never modified: this is the one place where inputs
        are handed to implementations. By default the implementation gets a copy, compared
        with x afterwards. A caller that builds x for this call alone and can test it
        cheaply (the sweep: consecutive encodings) passes that test as ``intact``: x itself
        is handed over, then tested - the copy and the comparison cost as much as torch's
        GELU itself (docs/design.md, The sweep). ``intact`` gets the outputs too, as the
        implementation returned them: the sweep reuses x once it knows they do not share
        its memory."""
        fmt = get_format(x.dtype)
        if fmt in self.native:
            return self._run(x, intact)
        if fmt in self.wider:
            return narrow(self._run(x.astype(self.wider[fmt].dtype)), fmt)
        raise ImplementationError(f"{self.id} does not take {fmt.name}; it takes "
                                  f"{', '.join(f.name for f in self.dtypes)}")

    def _run(self, x: np.ndarray, intact: Callable[[np.ndarray, object], bool] | None = None
             ) -> np.ndarray:
        given = x if intact else x.copy()  # the implementation's own: frameworks may share
        # its memory
        try:
            with np.errstate(all="ignore"):
                out = self.kernel(given)
        except ImplementationError as exc:  # said by a kernel that runs the code elsewhere
            raise ImplementationError(f"{self.id} {exc}") from None
        except Exception as exc:
            raise ImplementationError(f"{self.id} raised {type(exc).__name__}: {exc}",
                                      _own_frames(exc)) from exc
        if not (intact(given, out) if intact else np.array_equal(given.view(_uint(x)),
                                                           x.view(_uint(x)))):
            raise ImplementationError(f"{self.id} modified its input in place")
        if not hasattr(out, "dtype"):  # a list, a float: np.asarray would guess a dtype
            raise ImplementationError(f"{self.id} returned a {type(out).__name__}, not an "
                                      f"array of {x.dtype}")
        out = np.asarray(out)
        if out.shape != x.shape:
            raise ImplementationError(f"{self.id} returned shape {out.shape} for input shape "
                                      f"{x.shape}")
        if out.dtype != x.dtype:
            raise ImplementationError(f"{self.id} returned {out.dtype} for {x.dtype} input")
        return out


def _own_frames(exc: BaseException) -> str | None:
    """The traceback of ``exc`` less gelucheck's own frames: where the implementation's code
    raised (None where every frame is gelucheck's)."""
    import traceback
    from pathlib import Path

    ours = Path(__file__).resolve().parents[1]
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if ours not in Path(f.filename).resolve().parents]
    if not frames:
        return None
    return ("Traceback (the implementation's own frames):\n"
            + "".join(traceback.format_list(frames))
            + "".join(traceback.format_exception_only(type(exc), exc)))


def _uint(x: np.ndarray) -> np.dtype:
    """The unsigned integer of x's width: bits compare NaNs and signed zeros exactly."""
    return np.dtype(f"u{x.dtype.itemsize}")


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
    # The kernel tier its results are computed on (tiers.Tier), where the CPU's instructions
    # choose its kernels; None where they do not.
    tier: Tier | None = None

"""What a measurement produces, as types: accuracy (with its regions, special inputs and the
minimum), tanh drift and exhaustive sweeps. Reports, budgets, comparisons, the command line
and the pytest plugin switch on these types; the JSON ``kind`` string is read in one place,
:func:`from_json`.

Each type writes the JSON of schema 1 key for key (so reports stay comparable across
versions); a failed case is a :class:`Failure` with its reason, written as ``"error"``.
"""
from __future__ import annotations

from dataclasses import MISSING, asdict, dataclass, field, fields, is_dataclass
from functools import cache
from typing import Any, get_args, get_type_hints

import numpy as np
from typeguard import TypeCheckError, check_type

from .errors import UsageError


@dataclass(frozen=True)
class Failure:
    """This case could not be measured, and why (an implementation that raised, ...); where
    a user's callable raised, the frames of its own code (not saved in reports)."""

    reason: str
    traceback: str | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Identity:
    """Which implementation, function, dtype and device a result belongs to."""

    backend: str
    implementation: str
    function: str
    dtype: str
    device: str = "cpu"
    # which release (and CPU kernels) the figures belong to, for comparing environments
    backend_version: str | None = field(default=None, compare=False)
    # the kernel tier the figures were computed on (tiers.py), where the backend has tiers
    kernel_tier: str | None = field(default=None, compare=False)

    @property
    def id(self) -> str:
        return f"{self.backend}:{self.implementation}"

    @property
    def key(self) -> tuple[str, str, str]:
        """(implementation id, function, dtype): how budgets name a case."""
        return self.id, self.function, self.dtype

    def __str__(self) -> str:
        """implementation function dtype (device, where it is not the CPU)."""
        return f"{self.id} {self.function} {self.dtype}" + (
            f" ({self.device})" if self.device != "cpu" else "")

    @property
    def release(self) -> str | None:
        """The library's release alone: its version line up to the first comma or bracket
        ("2.13.0+cpu", "glibc 2.36")."""
        if not self.backend_version:
            return None
        return self.backend_version.split(",")[0].split("(")[0].strip() or None

    def provenance(self) -> dict:
        """What a result's JSON says of where its figures come from."""
        return {"backend_version": self.backend_version, "kernel_tier": self.kernel_tier}

    def to_json(self) -> dict:
        """Who measured what, as a result's JSON opens with it (from_json reads it back)."""
        return {"backend": self.backend, "implementation": self.implementation,
                "function": self.function, "dtype": self.dtype, "device": self.device,
                **self.provenance()}

    @classmethod
    def from_json(cls, d: dict) -> Identity:
        return cls(d["backend"], d["implementation"], d["function"], d["dtype"],
                   d.get("device", "cpu"), d.get("backend_version"), d.get("kernel_tier"))

    @classmethod
    def of(cls, impl, fmt, backend_version: str | None = None,
           kernel_tier: str | None = None) -> Identity:
        return cls(impl.backend, impl.name, impl.function.name, fmt.name, impl.device,
                   backend_version, kernel_tier)


@dataclass(frozen=True)
class Region:
    """The figures of one region of x."""

    name: str
    lo: float
    hi: float
    n: int
    max_ulp: float
    mean_ulp: float
    worst_input: float
    worst_input_hex: str
    not_correctly_rounded: int = 0


@dataclass(frozen=True)
class ErrorFigures:
    """Ulp and absolute error over a set of inputs, overall and per region."""

    n_inputs: int
    max_ulp: float
    mean_ulp: float
    n_infinite: int
    not_correctly_rounded: int
    worst_input: float
    worst_input_hex: str
    computed: float
    exact: float
    max_abs_error: float
    max_abs_at: float
    regions: list[Region]
    # results no value of the function can have: outside its range, or of the wrong sign
    impossible: int | None = 0  # None: not measured (a report from before the check)
    impossible_at: float | None = None
    impossible_at_hex: str | None = None
    impossible_computed: float | None = None

    def region(self, name: str) -> Region | None:
        return next((r for r in self.regions if r.name == name), None)

    @classmethod
    def from_json(cls, d: dict) -> ErrorFigures:
        # A field with a default is younger than some reports: absent there, it was not
        # measured (None), which is not the default's "none found".
        values: dict[str, Any] = {
            f.name: d[f.name] if f.default is MISSING else d.get(f.name)
            for f in fields(cls) if f.name != "regions"}
        return cls(**values, regions=[Region(**r) for r in d["regions"]])


@dataclass(frozen=True)
class SpecialOutcome:
    input: float
    expected: float
    computed: float
    ok: bool


@dataclass(frozen=True)
class MinimumFinding:
    """GELU's negative minimum as an implementation computes it."""

    x_star: float
    x_star_rounded: float
    plateau_lo: float
    plateau_hi: float
    plateau_size: int
    contiguous: bool
    stride: int
    window: list[float]
    value: float
    exact_value: float
    true_argmin_on_plateau: bool
    value_ulp_error: float


@dataclass(frozen=True)
class SignFinding:
    """The sign of a computed derivative: wrong signs and false zeros over the stored inputs,
    and the crossing around x* (the last negative and first positive output)."""

    n_wrong_sign: int
    n_false_zero: int
    examples: list[dict]
    x_star: float
    crossing_lo: float | None
    crossing_hi: float | None
    sign_changes: int
    x_star_in_crossing: bool


def _part_to_json(part):
    if part is None:
        return None
    if isinstance(part, Failure):
        return {"error": part.reason}
    if isinstance(part, dict):
        return {k: asdict(v) for k, v in part.items()}
    return asdict(part)


def _part_from_json(d, build):
    if d is None:
        return None
    if isinstance(d.get("error"), (str, dict)):
        error = d["error"]
        return Failure(error if isinstance(error, str) else str(error.get("computed")))
    return build(d)


@dataclass(frozen=True)
class Fingerprint:
    """Which candidate formula the outputs computed (checks.fingerprint), against the one the
    implementation declares."""

    formula: str  # a candidate's name, "none of these", or "undecided" (too inaccurate to tell)
    declared: str | None  # None: the implementation does not say (a stand-in with no formula)
    n_inputs: int  # inputs that told the candidates apart
    margin: float  # votes of the best candidate minus those of the second
    candidates: dict  # name -> closest_share, equal_share, median_ulp

    @property
    def mismatch(self) -> bool:
        return self.declared is not None and self.formula not in (self.declared, "undecided")


@dataclass(frozen=True)
class Signature:
    """A defect's mechanism found in one measurement (gelucheck.signatures), with its
    evidence."""

    name: str
    count: int  # inputs that show it
    first: float | None  # the smallest such input (None: not a property of inputs)
    worst: float | None  # the one with the largest ulp error
    region: str  # the region of the worst
    advice: str  # one sentence a user can act on
    detail: str = ""  # which format, which direction, which formula

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict) -> Signature:
        return cls(**d)

    def line(self) -> str:
        """One line for a table or a failure message."""
        what = f"{self.name}" + (f" ({self.detail})" if self.detail else "")
        where = (f", from x = {self.first:.6g}, worst x = {self.worst:.6g} ({self.region})"
                 if self.first is not None and self.worst is not None else "")
        return f"{what}: {self.count:,} inputs{where} - {self.advice}"


@dataclass
class AccuracyResult:
    """One implementation in one dtype against the reference: the ulp error (and, when
    measured, the special inputs and the minimum). Parts not measured are None."""

    identity: Identity
    reference: str  # the function measured against (exact GELU for a stand-in)
    how: str
    description: str
    failure: Failure | None = None
    figures: ErrorFigures | None = None
    all_nan: bool = False
    minimum: MinimumFinding | Failure | None = None
    specials: dict[str, SpecialOutcome] | Failure | None = None
    sign: SignFinding | Failure | None = None
    n_tried: int | None = None
    fingerprint: Fingerprint | None = None
    # ulp error against x in a few hundred bins (checks.profile): what plots are drawn from
    profile: dict | None = None  # how many inputs a failed measurement was given
    # the defect signatures found (signatures.py): None where none was looked for
    diagnosis: list | None = None
    # per-input ulp errors and outputs, kept (not written) for plots and assertions
    errors: np.ndarray | None = field(default=None, repr=False, compare=False)
    outputs: np.ndarray | None = field(default=None, repr=False, compare=False)

    kind = "accuracy"

    @property
    def label(self) -> str:
        return str(self.identity)

    @property
    def failing_specials(self) -> list[str]:
        """The labels of the special inputs that miss their limit, in the order measured."""
        if not isinstance(self.specials, dict):
            return []
        return [k for k, s in self.specials.items() if not s.ok]

    def to_json(self) -> dict:
        i = self.identity
        out: dict[str, object] = {
            "kind": self.kind, "backend": i.backend, "implementation": i.implementation,
            "function": i.function, "reference": self.reference, "dtype": i.dtype,
            "device": i.device, "how": self.how, "description": self.description,
            "error": self.failure.reason if self.failure else None}
        if self.failure:
            out.update(n_inputs=self.n_tried, max_ulp=float("inf"))
        elif self.figures:
            figures = asdict(self.figures)
            for k in ("n_inputs", "max_ulp", "mean_ulp", "n_infinite"):
                out[k] = figures.pop(k)
            out["all_nan"] = self.all_nan
            out.update(figures)
        out.update(i.provenance())
        measured = self.failure is None and self.figures is not None
        if measured or self.minimum is not None:
            out["minimum"] = _part_to_json(self.minimum)  # null: a function with no minimum
        if measured or self.specials is not None:
            out["specials"] = _part_to_json(self.specials)
        if self.sign is not None:
            out["sign"] = _part_to_json(self.sign)
        if self.fingerprint is not None:
            out["fingerprint"] = {**asdict(self.fingerprint),
                                  "mismatch": self.fingerprint.mismatch}
        if self.diagnosis is not None:
            out["diagnosis"] = [d.to_json() for d in self.diagnosis]
        if self.profile is not None:
            out["profile"] = self.profile
        return out

    @classmethod
    def from_json(cls, d: dict) -> AccuracyResult:
        identity = Identity.from_json(d)
        failure = Failure(d["error"]) if d.get("error") else None
        figures = None if failure or "mean_ulp" not in d else ErrorFigures.from_json(d)
        return cls(identity, d.get("reference", d["function"]), d.get("how", ""),
                   d.get("description", ""), failure, figures, d.get("all_nan", False),
                   _part_from_json(d.get("minimum"), lambda m: MinimumFinding(**m)),
                   _part_from_json(d.get("specials"),
                                   lambda s: {k: SpecialOutcome(**v) for k, v in s.items()}),
                   _part_from_json(d.get("sign"), lambda s: SignFinding(**s)),
                   d.get("n_inputs") if failure else None,
                   _part_from_json(d.get("fingerprint"), lambda f: Fingerprint(
                       **{k: v for k, v in f.items() if k != "mismatch"})),
                   d.get("profile"), diagnosis=_diagnosis_from_json(d.get("diagnosis")))


def _diagnosis_from_json(items):
    if items is None:
        return None
    return [Signature.from_json(i) for i in items]


@dataclass(frozen=True)
class DriftFigures:
    """How two outputs of the same inputs differ, in ulps of the first and absolutely."""

    n_inputs: int
    differ_fraction: float
    nonfinite_differ: int
    max_ulp: float
    at_ulp: float
    at_ulp_hex: str
    max_abs: float
    at: float
    at_hex: str


@dataclass
class DriftResult:
    """Exact GELU against its tanh form (or a stand-in): as mathematics (``device`` None, the
    correctly rounded values of both) or as a backend computes them. With ``pair`` "runtimes",
    any two implementations against each other ("trained in one, served in another"): then
    the implementations are named ``backend:name@function``."""

    backend: str
    exact_implementation: str
    tanh_implementation: str
    dtype: str
    device: str | None = None
    failure: Failure | None = None
    figures: DriftFigures | None = None
    minimum_shift: float | None = None
    minimum_value_shift: float | None = None
    pair: str = "tanh"  # "tanh": a GELU against its tanh form; "runtimes": a chosen pair

    kind = "drift"

    @property
    def label(self) -> str:
        return (f"drift {self.backend}:{self.exact_implementation} vs "
                f"{self.tanh_implementation} {self.dtype}")

    @property
    def mathematical(self) -> bool:
        return self.device is None

    def to_json(self) -> dict:
        out: dict[str, object] = {"kind": self.kind, "backend": self.backend,
               "exact_implementation": self.exact_implementation,
               "tanh_implementation": self.tanh_implementation, "dtype": self.dtype,
               "pair": self.pair}
        if not self.mathematical:
            out["device"] = self.device
            out["error"] = self.failure.reason if self.failure else None
        if self.figures:
            out.update(asdict(self.figures))
        for k in ("minimum_shift", "minimum_value_shift"):
            if getattr(self, k) is not None:
                out[k] = getattr(self, k)
        return out

    @classmethod
    def from_json(cls, d: dict) -> DriftResult:
        figures = (DriftFigures(**{f.name: d[f.name] for f in fields(DriftFigures)})
                   if "differ_fraction" in d else None)
        return cls(d["backend"], d["exact_implementation"], d["tanh_implementation"],
                   d["dtype"], d.get("device"), Failure(d["error"]) if d.get("error") else None,
                   figures, d.get("minimum_shift"), d.get("minimum_value_shift"),
                   d.get("pair", "tanh"))


@dataclass
class SweepResult:
    """Every float32 encoding in a range: the figures of ``gelucheck check`` plus a histogram
    of ulp errors and the time spent, CPU seconds summed over workers."""

    identity: Identity
    reference: str
    how: str
    range: list[str]
    n_slow_reference: int
    failure: Failure | None = None
    figures: ErrorFigures | None = None
    histogram: dict | None = None
    eval_s: float = 0.0
    check_s: float = 0.0
    reference_s: float = 0.0
    wall_s: float | None = None
    n_evaluated: int | None = None  # inputs computed in this run (the rest came from checkpoints)
    compile_s: float | None = None  # the compiled loops' compile or cache load, before the sweep
    task_s: float = 0.0  # the tasks' whole time: the parts above, merging and bookkeeping
    guard_s: float = 0.0  # testing that the implementation left its inputs intact
    # how this run's tasks ran: {"name": here | local | dask, "workers", "tasks", and
    # "overhead_s": the workers' wall time not spent in a task (start, dispatch, transfer,
    # idle at the end)}; None where nothing was computed in this run
    engine: dict | None = None

    kind = "sweep"

    @property
    def label(self) -> str:
        return f"sweep {self.identity}"

    @property
    def correctly_rounded_fraction(self) -> float:
        f = self.figures
        assert f is not None, "a sweep that was not measured has no share"
        return 1 - f.not_correctly_rounded / f.n_inputs

    def to_json(self) -> dict:
        i = self.identity
        out = {"kind": self.kind, "backend": i.backend, "implementation": i.implementation,
               "function": i.function, "reference": self.reference, "dtype": i.dtype,
               "device": i.device, "how": self.how, "range": self.range,
               "n_slow_reference": self.n_slow_reference,
               "error": self.failure.reason if self.failure else None,
               **i.provenance()}
        if self.failure:
            out["max_ulp"] = float("inf")
        elif self.figures:
            out.update(asdict(self.figures))
            out.update(correctly_rounded_fraction=self.correctly_rounded_fraction,
                       histogram=self.histogram, eval_s=self.eval_s, check_s=self.check_s,
                       reference_s=self.reference_s, task_s=self.task_s,
                       guard_s=self.guard_s)
        if self.wall_s is not None:
            out["wall_s"] = self.wall_s
        if self.n_evaluated is not None:
            out["n_evaluated"] = self.n_evaluated
        if self.compile_s is not None:
            out["compile_s"] = self.compile_s
        if self.engine is not None:
            out["engine"] = self.engine
        return out

    @classmethod
    def from_json(cls, d: dict) -> SweepResult:
        identity = Identity.from_json(d)
        failure = Failure(d["error"]) if d.get("error") else None
        figures = None if failure else ErrorFigures.from_json(d)
        return cls(identity, d.get("reference", d["function"]), d.get("how", ""), d["range"],
                   d.get("n_slow_reference", 0), failure, figures, d.get("histogram"),
                   d.get("eval_s", 0.0), d.get("check_s", 0.0), d.get("reference_s", 0.0),
                   d.get("wall_s"), d.get("n_evaluated"), d.get("compile_s"),
                   d.get("task_s", 0.0), d.get("guard_s", 0.0), d.get("engine"))


@dataclass
class PathFigures:
    """One call path against the bulk contiguous result: outputs that differ bit for bit,
    the largest difference in ulps of the bulk output, the path's own worst ulp error (None:
    not measured, never a 0 that reads as exact)."""

    name: str
    n_inputs: int
    n_differ: int = 0
    max_ulp_difference: float = 0.0
    max_ulp: float | None = None
    examples: list[dict] = field(default_factory=list)
    error: str | None = None


@dataclass
class ConsistencyResult:
    """Same input, same output: an implementation's paths against its bulk result."""

    identity: Identity
    failure: Failure | None = None
    bulk_max_ulp: float | None = None
    paths: list[PathFigures] = field(default_factory=list)
    # path-dependent (signatures.diagnose_paths): None where none was looked for
    diagnosis: list | None = None

    kind = "consistency"

    @property
    def label(self) -> str:
        return f"consistency {self.identity}"

    def to_json(self) -> dict:
        return {"kind": self.kind, **self.identity.to_json(),
                "error": self.failure.reason if self.failure else None,
                "bulk_max_ulp": self.bulk_max_ulp, "paths": [asdict(p) for p in self.paths],
                **({} if self.diagnosis is None else
                   {"diagnosis": [s.to_json() for s in self.diagnosis]})}

    @classmethod
    def from_json(cls, d: dict) -> ConsistencyResult:
        return cls(Identity.from_json(d), Failure(d["error"]) if d.get("error") else None,
                   d.get("bulk_max_ulp"), [PathFigures(**p) for p in d.get("paths", [])],
                   _diagnosis_from_json(d.get("diagnosis")))


@dataclass(frozen=True)
class SearchFigures:
    """The worst input a float64 search found, its error settled by mpmath (Ziv's loop):
    a lower bound of the implementation's true largest error."""

    max_ulp: float
    worst_input: float
    worst_input_hex: str
    computed: float  # the implementation's output there
    exact: float  # the correctly rounded value
    settled: int  # candidates re-checked by mpmath
    # the largest distance between a candidate's fast-reference figure and mpmath's (at most
    # the reference's proven bound: docs/design.md, The float64 search's reference); None
    # where every candidate's error is infinite (nothing to compare)
    reference_gap: float | None


@dataclass(frozen=True)
class SearchResult:
    """``gelucheck search``: the largest error found among the evaluations of a seeded
    search, not a maximum over every input."""

    identity: Identity
    evaluations: int
    seed: int
    failure: Failure | None = None
    figures: SearchFigures | None = None
    candidates: list[dict] = field(default_factory=list)  # {"x": hex, "ulp": settled figure}
    rounds: int = 0
    whole_cells: int = 0  # cells searched whole (the landmarks' and the descents')
    wall_s: float | None = None
    implementation_s: float = 0.0
    reference_s: float = 0.0
    engine: dict | None = None
    # the signatures on the consecutive inputs around the worst (search/diagnose.py); None
    # where none were looked for
    diagnosis: list | None = None

    kind = "search"

    @property
    def label(self) -> str:
        return f"search {self.identity}"

    def to_json(self) -> dict:
        out = {"kind": self.kind, **self.identity.to_json(),
               "error": self.failure.reason if self.failure else None,
               "evaluations": self.evaluations, "seed": self.seed, "rounds": self.rounds,
               "whole_cells": self.whole_cells, "candidates": self.candidates,
               "wall_s": self.wall_s, "implementation_s": self.implementation_s,
               "reference_s": self.reference_s, "engine": self.engine,
               **({} if self.diagnosis is None else
                  {"diagnosis": [sig.to_json() for sig in self.diagnosis]})}
        if self.failure:
            out["max_ulp"] = float("inf")
        elif self.figures:
            out.update(asdict(self.figures))
        return out

    @classmethod
    def from_json(cls, d: dict) -> SearchResult:
        failure = Failure(d["error"]) if d.get("error") else None
        figures = None if failure else SearchFigures(
            *(d[f.name] for f in fields(SearchFigures)))
        return cls(Identity.from_json(d), d["evaluations"], d["seed"], failure, figures,
                   d.get("candidates", []), d.get("rounds", 0), d.get("whole_cells", 0),
                   d.get("wall_s"), d.get("implementation_s", 0.0), d.get("reference_s", 0.0),
                   d.get("engine"), _diagnosis_from_json(d.get("diagnosis")))


Result = AccuracyResult | DriftResult | SweepResult | ConsistencyResult | SearchResult
KINDS = {cls.kind: cls for cls in (AccuracyResult, DriftResult, SweepResult,
                                   ConsistencyResult, SearchResult)}


def from_json(d: dict) -> Result:
    """A result from its JSON object; an unknown kind is refused with the known ones."""
    kind = d.get("kind") if isinstance(d, dict) else None
    if kind not in KINDS:
        raise UsageError(f"not a gelucheck result (kind {kind!r}); known kinds: "
                         f"{', '.join(KINDS)}")
    a = "an" if kind[0] in "aeiou" else "a"
    try:
        result = KINDS[kind].from_json(d)
    except (KeyError, TypeError, ValueError) as exc:
        raise UsageError(f"{a} {kind} result lacks or mangles a field ({exc})") from None
    _check_fields(result, f"{a} {kind} result's ")
    return result


# the figures never below zero besides the counts (the fields declared int) and the seconds
# (named *_s): errors and shares - not where they lie (worst_input, at_ulp, x_star ...)
_NEVER_NEGATIVE = {"max_ulp", "mean_ulp", "bulk_max_ulp", "max_ulp_difference", "max_abs",
                   "max_abs_error", "value_ulp_error", "differ_fraction"}


@cache
def _hints(cls: type) -> dict[str, Any]:
    return get_type_hints(cls)


def _check_fields(value: Any, where: str) -> None:
    """Every field of a result read back, nested ones too, of the type it is declared with
    (typeguard reads the declarations), and no count or error below zero: a damaged report
    is refused by name, never compared, judged or drawn."""
    if isinstance(value, dict):
        for key, item in value.items():
            _check_fields(item, f"{where}{key}.")
    elif isinstance(value, list):
        for item in value:
            _check_fields(item, where)
    elif is_dataclass(value) and not isinstance(value, type):
        for f in fields(value):
            item, hint = getattr(value, f.name), _hints(type(value))[f.name]
            try:
                check_type(item, hint)
            except TypeCheckError:
                raise UsageError(f"{where}{f.name} is {item!r}, not {_name(hint)}") from None
            number = isinstance(item, (int, float)) and not isinstance(item, bool)
            if number and item < 0 and _never_negative(f.name, hint):
                raise UsageError(f"{where}{f.name} is {item!r}: a count, an error or a time "
                                 "is never below 0")
            _check_fields(item, f"{where}{f.name}.")


def _never_negative(name: str, hint: Any) -> bool:
    """Whether the field is a count (declared int), an error, a share or seconds."""
    count = (hint is int or int in get_args(hint)) and float not in get_args(hint)
    return count or name in _NEVER_NEGATIVE or name.endswith("_s")


def _name(hint: Any) -> str:
    return getattr(hint, "__name__", str(hint)).replace("gelucheck.results.", "")

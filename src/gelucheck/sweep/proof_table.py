"""The proven results of the inputs the sweep's reference leaves in doubt, stored: every sweep
of a function meets the same ones (the tanh form's 6,300; a few hundred for GELU), and
Arb proves each again in every sweep (mpmath, more slowly, where python-flint is not
installed): docs/design.md, The sweep.

Each entry is a fact about the function alone, not about the loops that flagged it: the
input's float32 encoding, the correctly rounded float32 and float64 of the exact value and
its side of that float32 - what proofs.resolve returns. A stale table (the loops now flag
other inputs) only sends those inputs to Arb again; it never changes a figure.
scripts/make-proof-table.py writes data/sweep_proofs.npz with a digest, checked on load."""
from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from zipfile import BadZipFile

import numpy as np

from ..errors import ReferenceDataError
from .phi_table import DATA

PATH = DATA / "sweep_proofs.npz"
FIELDS = {"x": np.uint32, "bits": np.uint32, "bits64": np.uint64, "side": np.int8}
REWRITE = "rewrite it with scripts/make-proof-table.py"


@dataclass(frozen=True)
class Proven:
    """One function's entries, ascending in x's encoding."""

    x: np.ndarray  # float32 encodings of the inputs
    bits: np.ndarray  # the correctly rounded float32's encodings
    bits64: np.ndarray  # the correctly rounded float64's
    side: np.ndarray  # +1: the exact value lies above that float32, -1 below

    def find(self, encodings: np.ndarray) -> np.ndarray:
        """The entry of each encoding, -1 where there is none."""
        if not len(self.x):
            return np.full(len(encodings), -1)
        at = np.minimum(np.searchsorted(self.x, encodings), len(self.x) - 1)
        return np.where(self.x[at] == encodings, at, -1)


def digest(arrays: Mapping[str, np.ndarray]) -> str:
    h = hashlib.sha256()
    for name in sorted(arrays):
        h.update(name.encode())
        h.update(np.ascontiguousarray(arrays[name]).tobytes())
    return h.hexdigest()


def write(entries: Mapping[str, Proven], path: Path) -> None:
    arrays = {f"{name}.{field}": getattr(proven, field).astype(dtype)
              for name, proven in entries.items() for field, dtype in FIELDS.items()}
    np.savez_compressed(path, sha256=np.array(digest(arrays)), **arrays)


def table(path: Path | None = None) -> dict[str, Proven]:
    """Every function's entries (data/sweep_proofs.npz's by default), checked against their
    digest, types and order."""
    path = path or PATH
    try:
        stamp = path.stat().st_mtime_ns  # a file rewritten (the script's) is read again
    except OSError as exc:
        raise ReferenceDataError(f"{path}: unreadable ({exc}); {REWRITE}") from None
    return _load(path, stamp)


@cache
def _load(path: Path, stamp: int) -> dict[str, Proven]:
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {name: data[name] for name in data.files}
    except (OSError, ValueError, BadZipFile, EOFError) as exc:
        raise ReferenceDataError(f"{path}: unreadable ({exc}); {REWRITE}") from None
    stored = arrays.pop("sha256", None)
    names = {name.rpartition(".")[0] for name in arrays}
    try:
        out = {name: Proven(*(arrays[f"{name}.{field}"] for field in FIELDS)) for name in names}
    except KeyError as exc:
        raise ReferenceDataError(f"{path}: damaged (no array {exc}); {REWRITE}") from None
    if (stored is None or str(stored) != digest(arrays) or not all(
            _well_formed(proven) for proven in out.values())):
        raise ReferenceDataError(f"{path}: damaged (digest, types or order differ); {REWRITE}")
    return out


def _well_formed(proven: Proven) -> bool:
    arrays = [getattr(proven, field) for field in FIELDS]
    return (all(a.dtype == dtype and a.shape == proven.x.shape
                for a, dtype in zip(arrays, FIELDS.values()))
            and bool(np.all(proven.x[1:] > proven.x[:-1])))


def side_sign(side: float) -> int:
    """A proof's side as stored: its sign, which is all resolve_all reads of it (mpmath's
    residual may be a signed zero)."""
    return int(math.copysign(1, side))


def entries(function: str) -> Proven | None:
    return table().get(function)


def encodings_of(x: np.ndarray) -> np.ndarray | None:
    """The float32 encodings of inputs given as float32 or as their float64 copies; None
    where some input is no float32 (the table holds float32 inputs only)."""
    x = np.asarray(x)
    if x.dtype == np.float32:
        return x.view(np.uint32)
    narrow = x.astype(np.float32)
    if not np.array_equal(narrow.astype(x.dtype), x):
        return None
    return narrow.view(np.uint32)


DEFAULT_SUBSET = 50  # entries per function re-derived by verify without full


@dataclass
class Verified:
    """verify's findings: entries re-derived per function, Arb's proofs, what differs."""

    checked: dict[str, int] = field(default_factory=dict)
    arb_proven: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def verify(functions: list[str] | None = None, full: bool = False, arb: bool = True,
           seed: int = 0, path: Path | None = None) -> Verified:
    """The table's entries (a random subset of each function's, every one with ``full``)
    derived afresh by mpmath's Ziv loop, and proven by Arb where python-flint is installed:
    the float32, the float64 and the exact value's side must be the stored ones
    (``gelucheck reference verify``)."""
    from ..formats import FLOAT32
    from ..functions import get_function
    from ..reference import arbref
    from ..reference.mpref import correctly_rounded

    out = Verified()
    try:
        stored = table(path)
    except ReferenceDataError as exc:
        out.problems.append(str(exc))
        return out
    arb = arb and arbref.available()
    rng = np.random.default_rng(seed)
    for name in sorted(stored) if functions is None else [f for f in functions if f in stored]:
        proven, function = stored[name], get_function(name)
        n = len(proven.x)
        picked = range(n) if full else np.sort(rng.choice(n, min(DEFAULT_SUBSET, n),
                                                          replace=False))
        for j in picked:
            x = float(FLOAT32.from_bits(proven.x[j]))
            at = f"{path or PATH}: {name} at x={x!r} ({int(proven.x[j]):#010x})"
            entry = (int(proven.bits[j]), int(proven.bits64[j]), int(proven.side[j]))
            mp = correctly_rounded(function, x, FLOAT32)
            fresh = (mp.bits, mp.float64_bits, side_sign(mp.residual))
            if fresh != entry:
                out.problems.append(f"{at}: stored {entry}, mpmath {fresh}")
            if arb and (by_arb := arbref.rounded(function, x, FLOAT32)) is not None:
                out.arb_proven += 1
                if tuple(map(int, by_arb)) != entry:
                    out.problems.append(f"{at}: stored {entry}, Arb {tuple(by_arb)}")
        out.checked[name] = len(picked)
    return out

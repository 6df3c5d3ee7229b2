"""Reading and writing the reference data in ``reference/``: files per format, a manifest.

Per format (a folder) and input plan, ``inputs.<plan>.npz`` holds the inputs (``x``, bit
patterns) that the plan's functions share; per function, ``<fn>.npz`` holds at those inputs
the correctly rounded value (``rounded``, bit patterns), the exact value correctly rounded to
float64 (``exact``) and the exact value's distance from the rounded one in the format's ulps
(``residual``): float64 inputs need that residual, since no float64 carries their exact value.
One function's file can be added or rebuilt without touching any other file.
Each zip is written with fixed timestamps so that a rebuild reproduces it byte for byte, and
the manifest holds a checksum per file and per block of entries, so that an edit can be
located; a function's entry also records the checksum of the inputs it was computed at.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ReferenceDataError
from ..formats import Format, get_format
from ..functions import FUNCTIONS, Function, get_function
from .plans import InputPlan

BLOCK = 4096
MANIFEST = "manifest.json"
FIELDS = ("rounded", "exact", "residual")
FORMAT_VERSION = 2  # 1: one file per format holding every function
REBUILD = "gelucheck reference build"


def default_directory() -> Path:
    """``$GELUCHECK_REFERENCE``; else the data an installed wheel carries
    (``gelucheck/data/reference``); else the ``reference/`` folder of this source checkout."""
    env = os.environ.get("GELUCHECK_REFERENCE")
    if env:
        return Path(env)
    packaged = Path(__file__).resolve().parents[1] / "data" / "reference"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[3] / "reference"


def plan_of(which: str | Function | InputPlan) -> InputPlan:
    return which if isinstance(which, InputPlan) else get_function(which).inputs


def members(plan: str | Function | InputPlan) -> list[Function]:
    """The functions whose values are stored at one plan's inputs."""
    name = plan_of(plan).name
    return [f for f in FUNCTIONS.values() if f.inputs.name == name]


def plans() -> list[InputPlan]:
    return [plan for plan, _ in by_plan(FUNCTIONS.values())]


def by_plan(functions) -> list[tuple[InputPlan, list[Function]]]:
    """The functions grouped by the input plan their values are stored at, in their order."""
    groups: dict[str, tuple[InputPlan, list[Function]]] = {}
    for f in functions:
        groups.setdefault(f.inputs.name, (f.inputs, []))[1].append(f)
    return list(groups.values())


def inputs_file(fmt: Format, plan: str | Function | InputPlan) -> str:
    return f"{fmt.name}/inputs.{plan_of(plan).name}.npz"


def function_file(fmt: Format, function: str | Function) -> str:
    return f"{fmt.name}/{get_function(function).name}.npz"


@dataclass
class Table:
    """The reference data of one format and input plan: the inputs (``x``) and, per function
    of the plan, ``<fn>.rounded``, ``<fn>.exact`` and ``<fn>.residual``."""

    fmt: Format
    plan: InputPlan
    arrays: dict[str, np.ndarray]
    # what checks derive from the inputs alone, computed once per table (``derived``)
    _derived: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def derived(self, key: str, compute: Callable[[], Any]) -> Any:
        """``compute()``, kept with the table under ``key``: a value that depends on the
        table's arrays alone, which every implementation measured at them shares."""
        if key not in self._derived:
            self._derived[key] = compute()
        return self._derived[key]

    @property
    def x(self) -> np.ndarray:
        return self.fmt.from_bits(self.arrays["x"])

    @property
    def functions(self) -> list[Function]:
        return [f for f in FUNCTIONS.values() if f"{f.name}.rounded" in self.arrays]

    def _field(self, function: str | Function, name: str) -> np.ndarray:
        fn = get_function(function)
        key = f"{fn.name}.{name}"
        if key not in self.arrays:
            raise ReferenceDataError(
                f"{self.fmt.name}: {fn.name} is stored at the inputs of plan {fn.inputs.name!r},"
                f" not at those of {self.plan.name!r}")
        return self.arrays[key]

    def file_arrays(self, function: str | Function | None = None) -> dict[str, np.ndarray]:
        """The arrays of one of the table's files under the names the file holds them by:
        the inputs file's (``function`` None), or one function's."""
        if function is None:
            return {"x": self.arrays["x"]}
        return {name: self._field(function, name) for name in FIELDS}

    def rounded(self, function: str | Function) -> np.ndarray:
        return self.fmt.from_bits(self._field(function, "rounded"))

    def exact(self, function: str | Function) -> np.ndarray:
        return self._field(function, "exact")

    def residual(self, function: str | Function) -> np.ndarray:
        return self._field(function, "residual")

    def __len__(self) -> int:
        return len(self.arrays["x"])


def _write_npz(arrays: dict[str, np.ndarray], directory: Path, relative: str) -> dict:
    """One file, deterministically; returns its manifest entry."""
    path = directory / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for name, array in arrays.items():
            buffer = io.BytesIO()
            np.lib.format.write_array(buffer, np.ascontiguousarray(array), allow_pickle=False)
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, buffer.getvalue())
    length = len(next(iter(arrays.values())))
    return {"sha256": _sha256(path.read_bytes()), "bytes": path.stat().st_size,
            "entries": length, "block": BLOCK,
            "arrays": {name: _block_hashes(a) for name, a in arrays.items()}}


def write_inputs(fmt: Format, plan: InputPlan, x_bits: np.ndarray, directory: Path) -> dict:
    return {**_write_npz({"x": x_bits}, directory, inputs_file(fmt, plan)), "plan": plan.name}


def write_function(table: Table, function: Function, inputs_entry: dict,
                   directory: Path) -> dict:
    entry = _write_npz(table.file_arrays(function), directory,
                       function_file(table.fmt, function))
    return {**entry, "function": function.name, "inputs": inputs_file(table.fmt, function),
            "inputs_sha256": inputs_entry["sha256"]}


def write_table(table: Table, directory: Path, manifest: dict) -> None:
    """Write a table's inputs and every function it holds, and their manifest entries."""
    files = manifest.setdefault("files", {})
    entry = write_inputs(table.fmt, table.plan, table.file_arrays()["x"], directory)
    files[inputs_file(table.fmt, table.plan)] = entry
    for function in table.functions:
        files[function_file(table.fmt, function)] = write_function(table, function, entry,
                                                                   directory)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _block_hashes(array: np.ndarray) -> list[str]:
    data = np.ascontiguousarray(array)
    return [_sha256(data[i:i + BLOCK].tobytes())[:16] for i in range(0, max(len(data), 1), BLOCK)]


def read_manifest(directory: Path | None = None) -> dict:
    directory = Path(directory or default_directory())
    path = directory / MANIFEST
    if not path.exists():
        raise ReferenceDataError(f"{path}: missing; regenerate with `{REBUILD}`")
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise ReferenceDataError(f"{path}: not valid JSON ({exc})") from None


def write_manifest(manifest: dict, directory: Path) -> None:
    (directory / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")


def read_arrays(directory: Path, relative: str, entry: dict | None, rebuild: str) -> dict:
    """The arrays of one file; checked against its manifest entry unless ``entry`` is None."""
    path = directory / relative
    if not path.exists():
        raise ReferenceDataError(f"{path}: missing; regenerate with `{rebuild}`")
    raw = path.read_bytes()
    if entry is not None and (_sha256(raw) != entry.get("sha256")
                              or len(raw) != entry.get("bytes")):
        raise ReferenceDataError(
            f"{path}: does not match its manifest (sha256/size differ): the data was "
            "changed or damaged. Restore it from the release or repository, or rebuild "
            f"it with `{rebuild}`; `gelucheck reference verify` names the first changed entry")
    try:
        with np.load(io.BytesIO(raw), allow_pickle=False) as npz:
            arrays = {name: npz[name] for name in npz.files}
    except Exception as exc:  # noqa: BLE001 - a damaged zip raises many kinds of error
        raise ReferenceDataError(f"{path}: unreadable ({type(exc).__name__}: {exc})") from None
    lengths = {name: len(a) for name, a in arrays.items()}
    if len(set(lengths.values())) > 1:
        raise ReferenceDataError(f"{path}: arrays of different lengths {lengths}")
    if entry is not None and set(lengths.values()) != {entry.get("entries")}:
        raise ReferenceDataError(f"{path}: holds {set(lengths.values())} entries, its manifest "
                                 f"says {entry.get('entries')}")
    return arrays


def rebuild_command(fmt: Format, function: Function | None = None) -> str:
    return REBUILD + (f" --function {function.name}" if function else "") + f" --dtype {fmt.name}"


def load(dtype: str | Format, plan: str | Function | InputPlan, directory: Path | None = None,
         checked: bool = True) -> Table:
    """The reference data of one format at one plan's inputs, with every function of the plan.
    Each file is checked against its manifest entry (checksum, size, entries, the inputs it
    was computed at) unless ``checked`` is false - only ``reference verify`` reads data it has
    yet to judge. A file that is missing, damaged or changed is refused, named."""
    fmt, plan = get_format(dtype), plan_of(plan)
    directory = Path(directory or default_directory())
    files = read_manifest(directory).get("files", {}) if checked else {}

    def entry(relative: str, rebuild: str) -> dict | None:
        if not checked:
            return None
        if relative not in files:
            raise ReferenceDataError(f"{directory / relative}: not in {directory / MANIFEST}; "
                                     f"build it with `{rebuild}`")
        return files[relative]

    x_rel = inputs_file(fmt, plan)
    inputs = read_arrays(directory, x_rel, entry(x_rel, rebuild_command(fmt)),
                         rebuild_command(fmt))
    if "x" not in inputs:
        raise ReferenceDataError(f"{directory / x_rel}: lacks the array 'x'")
    arrays = {"x": inputs["x"]}
    for function in members(plan):
        rel = function_file(fmt, function)
        own = entry(rel, rebuild_command(fmt, function))
        if own is not None and own.get("inputs_sha256") != files[x_rel].get("sha256"):
            raise ReferenceDataError(
                f"{directory / rel}: computed at other inputs than {directory / x_rel} holds; "
                f"rebuild it with `{rebuild_command(fmt, function)}`")
        values = read_arrays(directory, rel, own, rebuild_command(fmt, function))
        missing = [name for name in FIELDS if name not in values]
        if missing:
            raise ReferenceDataError(f"{directory / rel}: lacks arrays {missing}")
        if any(len(values[name]) != len(arrays["x"]) for name in FIELDS):
            raise ReferenceDataError(f"{directory / rel}: not as long as its inputs "
                                     f"({len(arrays['x'])})")
        arrays.update({f"{function.name}.{name}": values[name] for name in FIELDS})
    return Table(fmt, plan, arrays)


def manifest_problems(directory: Path, relative: str, entry: dict) -> list[str]:
    """Every field of a file's manifest entry that the file does not match: the checksum,
    the size, the number of entries, the block size and each block's hash."""
    path = directory / relative
    if not path.exists():
        return [f"{relative}: missing"]
    problems = []
    raw = path.read_bytes()
    try:
        arrays = read_arrays(directory, relative, None, REBUILD)
    except ReferenceDataError as exc:
        return [str(exc)]
    entries = len(next(iter(arrays.values()))) if arrays else 0
    if _sha256(raw) != entry.get("sha256"):
        problems.append(f"{relative}: sha256 differs from the manifest")
    if len(raw) != entry.get("bytes"):
        problems.append(f"{relative}: {len(raw)} bytes, the manifest says {entry.get('bytes')}")
    if entries != entry.get("entries"):
        problems.append(f"{relative}: {entries} entries, the manifest says "
                        f"{entry.get('entries')}")
    if entry.get("block") != BLOCK:
        problems.append(f"{relative}: the manifest's block size {entry.get('block')!r} is not "
                        f"{BLOCK}")
    elif set(entry.get("arrays", {})) != set(arrays):
        problems.append(f"{relative}: the manifest lists arrays {sorted(entry.get('arrays', {}))}")
    else:
        changed = first_changed_entry(arrays, entry)
        if changed is not None:
            problems.append(f"{relative}: block hashes differ from the manifest in "
                            f"{changed[0]!r} from entry {changed[1]}")
    return problems


def first_changed_entry(arrays: dict[str, np.ndarray], entry: dict) -> tuple[str, int] | None:
    """The first (array, index) of one file whose block checksum differs from its entry."""
    for name in sorted(arrays):
        stored = entry.get("arrays", {}).get(name, [])
        actual = _block_hashes(arrays[name])
        for block, (want, have) in enumerate(zip(stored, actual)):
            if want != have:
                return name, block * entry["block"]
        if len(stored) != len(actual):
            return name, min(len(stored), len(actual)) * entry["block"]
    return None


def file_checksum(relative: str, directory: Path | None = None) -> str:
    return _sha256((Path(directory or default_directory()) / relative).read_bytes())

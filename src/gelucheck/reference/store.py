"""Reading and writing the reference data in ``reference/``: one .npz per format, a manifest.

Each file holds, per input (``x``, bit patterns) and function, the correctly rounded value
(``<fn>.rounded``, bit patterns), the exact value correctly rounded to float64 (``<fn>.exact``)
and the exact value's distance from the rounded one in the format's ulps (``<fn>.residual``):
float64 inputs need that residual, since no float64 carries their exact value.
The zip is written with fixed timestamps so that a rebuild reproduces it byte for byte, and
the manifest holds a checksum per block of entries, so that an edit can be located.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import ReferenceDataError
from ..formats import Format, get_format
from ..functions import FUNCTIONS, Function, get_function

BLOCK = 4096
MANIFEST = "manifest.json"
FIELDS = ("rounded", "exact", "residual")


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


def file_name(fmt: Format) -> str:
    return f"{fmt.name}.npz"


@dataclass
class Table:
    """The reference data of one format."""

    fmt: Format
    arrays: dict[str, np.ndarray]

    @property
    def x(self) -> np.ndarray:
        return self.fmt.from_bits(self.arrays["x"])

    def rounded(self, function: str | Function) -> np.ndarray:
        return self.fmt.from_bits(self.arrays[f"{get_function(function).name}.rounded"])

    def exact(self, function: str | Function) -> np.ndarray:
        return self.arrays[f"{get_function(function).name}.exact"]

    def residual(self, function: str | Function) -> np.ndarray:
        return self.arrays[f"{get_function(function).name}.residual"]

    def __len__(self) -> int:
        return len(self.arrays["x"])


def array_names() -> list[str]:
    return ["x"] + [f"{fn}.{field}" for fn in FUNCTIONS for field in FIELDS]


def write_table(table: Table, directory: Path) -> dict:
    """Write one format's file deterministically; returns its manifest entry."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / file_name(table.fmt)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for name in array_names():
            buffer = io.BytesIO()
            np.lib.format.write_array(buffer, np.ascontiguousarray(table.arrays[name]),
                                      allow_pickle=False)
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, buffer.getvalue())
    return {
        "sha256": _sha256(path.read_bytes()),
        "bytes": path.stat().st_size,
        "entries": len(table),
        "block": BLOCK,
        "arrays": {name: _block_hashes(table.arrays[name]) for name in array_names()},
    }


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _block_hashes(array: np.ndarray) -> list[str]:
    data = np.ascontiguousarray(array)
    return [_sha256(data[i:i + BLOCK].tobytes())[:16] for i in range(0, max(len(data), 1), BLOCK)]


def read_manifest(directory: Path | None = None) -> dict:
    directory = Path(directory or default_directory())
    path = directory / MANIFEST
    if not path.exists():
        raise ReferenceDataError(f"{path}: missing; regenerate with `gelucheck reference build`")
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise ReferenceDataError(f"{path}: not valid JSON ({exc})") from None


def write_manifest(manifest: dict, directory: Path) -> None:
    (directory / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")


def load(dtype: str | Format, directory: Path | None = None, checked: bool = True) -> Table:
    """The reference data of one format. Checked against its manifest entry (checksum,
    size, entries) unless ``checked`` is false - only ``reference verify`` reads data it
    has yet to judge. A file that is missing, damaged or changed is refused, named."""
    fmt = get_format(dtype)
    directory = Path(directory or default_directory())
    path = directory / file_name(fmt)
    if not path.exists():
        raise ReferenceDataError(f"{path}: missing; regenerate with "
                                 f"`gelucheck reference build --dtype {fmt.name}`")
    raw = path.read_bytes()
    if checked:
        entry = read_manifest(directory).get("files", {}).get(file_name(fmt))
        if entry is None:
            raise ReferenceDataError(f"{path}: not in {directory / MANIFEST}")
        if _sha256(raw) != entry.get("sha256") or len(raw) != entry.get("bytes"):
            raise ReferenceDataError(
                f"{path}: does not match its manifest (sha256/size differ): the data was "
                "changed or damaged. Restore it from the release or repository, or rebuild "
                f"it with `gelucheck reference build --dtype {fmt.name}`; `gelucheck "
                "reference verify` names the first changed entry")
    try:
        with np.load(io.BytesIO(raw), allow_pickle=False) as npz:
            arrays = {name: npz[name] for name in npz.files}
    except Exception as exc:  # noqa: BLE001 - a damaged zip raises many kinds of error
        raise ReferenceDataError(f"{path}: unreadable ({type(exc).__name__}: {exc})") from None
    missing = [name for name in array_names() if name not in arrays]
    if missing:
        raise ReferenceDataError(f"{path}: lacks arrays {missing}")
    lengths = {name: len(a) for name, a in arrays.items()}
    if len(set(lengths.values())) != 1:
        raise ReferenceDataError(f"{path}: arrays of different lengths {lengths}")
    table = Table(fmt, arrays)
    if checked and len(table) != entry.get("entries"):
        raise ReferenceDataError(f"{path}: holds {len(table)} entries, its manifest says "
                                 f"{entry.get('entries')}")
    return table


def manifest_problems(table: Table, entry: dict, path: Path) -> list[str]:
    """Every field of a manifest entry that the data does not match: the checksum, the size,
    the number of entries, the block size and each block's hash."""
    problems = []
    raw = path.read_bytes()
    if _sha256(raw) != entry.get("sha256"):
        problems.append(f"{path.name}: sha256 differs from the manifest")
    if len(raw) != entry.get("bytes"):
        problems.append(f"{path.name}: {len(raw)} bytes, the manifest says {entry.get('bytes')}")
    if len(table) != entry.get("entries"):
        problems.append(f"{path.name}: {len(table)} entries, the manifest says "
                        f"{entry.get('entries')}")
    if entry.get("block") != BLOCK:
        problems.append(f"{path.name}: the manifest's block size {entry.get('block')!r} is not "
                        f"{BLOCK}")
    elif set(entry.get("arrays", {})) != set(array_names()):
        problems.append(f"{path.name}: the manifest lists arrays {sorted(entry.get('arrays', {}))}")
    elif first_changed_entry(table, entry) is not None:
        array, start = first_changed_entry(table, entry)
        problems.append(f"{path.name}: block hashes differ from the manifest in {array!r} "
                        f"from entry {start}")
    return problems


def first_changed_entry(table: Table, entry: dict) -> tuple[str, int] | None:
    """The first (array, index) whose block checksum differs from the manifest entry."""
    for name in array_names():
        stored = entry["arrays"].get(name, [])
        actual = _block_hashes(table.arrays[name])
        for block, (want, have) in enumerate(zip(stored, actual)):
            if want != have:
                return name, block * entry["block"]
        if len(stored) != len(actual):
            return name, min(len(stored), len(actual)) * entry["block"]
    return None


def file_checksum(dtype: str | Format, directory: Path | None = None) -> str:
    path = Path(directory or default_directory()) / file_name(get_format(dtype))
    return _sha256(path.read_bytes())

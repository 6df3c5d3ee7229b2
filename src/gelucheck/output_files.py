"""Output paths, checked before any work starts: a measurement of minutes must never end in a
traceback because a folder is missing or not writable."""
from __future__ import annotations

import os
from pathlib import Path

from .errors import UsageError


def _ready_folder(folder: Path, option: str) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"{option} {folder}: the folder cannot be created "
                         f"({exc.strerror})") from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(f"{option} {folder}: the folder is not writable")


def file(path: str | None, option: str) -> Path | None:
    """A file to be written: its folder is created if missing; refused if it is a folder or
    cannot be written."""
    if path is None:
        return None
    target = Path(path)
    if target.is_dir():
        raise UsageError(f"{option} {target}: is a folder; give a file name")
    _ready_folder(target.parent, option)
    if target.exists() and not os.access(target, os.W_OK):
        raise UsageError(f"{option} {target}: not writable")
    return target


def folder(path: str | None, option: str) -> Path | None:
    """A folder to be written into, created if missing."""
    if path is None:
        return None
    target = Path(path)
    if target.exists() and not target.is_dir():
        raise UsageError(f"{option} {target}: is a file; give a folder")
    _ready_folder(target, option)
    return target


def distinct(*outputs: tuple[str, str | Path | None],
             inputs: tuple[tuple[str, str | Path], ...] = ()) -> None:
    """Each output its own file, none of them an input: two options naming one file would
    leave only the one written last (a JSON report lost under its Markdown), and an output
    over an input would destroy it. (option, path) pairs; a path of None is not written."""
    read = {Path(path).resolve(): option for option, path in inputs}
    written: dict[Path, str] = {}
    for option, path in outputs:
        if path is None:
            continue
        if (source := read.get(key := Path(path).resolve())) is not None:
            raise UsageError(f"{option} {path}: the command reads that file ({source}); "
                             "writing it would destroy it")
        if (other := written.get(key)) is not None:
            raise UsageError(f"{option} {path}: {other} names that file too; give each output "
                             "a file of its own")
        written[key] = option

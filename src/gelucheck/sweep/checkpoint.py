"""The one place where a sweep's checkpoints are written and read.

A checkpoint folder holds meta.json (which sweep: function, implementations, their versions,
range, task size) and one file per finished task. Each task file carries its own range, the
digest of the sweep it belongs to and a checksum of its contents, so that a file copied over
another task's name, edited, truncated, or left by a sweep of other code or another release is
refused with the reason, never merged.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from ..errors import UsageError
from .stats import ChunkStats
from .worker import Meta


class CheckpointError(UsageError):
    """A checkpoint that does not belong to this sweep, or is damaged."""


def _digest(data: object) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


class Checkpoint:
    """Finished tasks of one sweep in ``directory`` (None: nothing is kept)."""

    def __init__(self, directory: str | Path | None, meta: Meta):
        self.directory = Path(directory) if directory else None
        self.meta = meta
        self.sweep_digest = _digest(meta)
        if self.directory is None:
            return
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CheckpointError(f"--checkpoint {self.directory}: cannot be created "
                                  f"({exc.strerror})") from None
        if not os.access(self.directory, os.W_OK):
            raise CheckpointError(f"--checkpoint {self.directory}: not writable")
        path = self.directory / "meta.json"
        if path.exists():
            old = self._read(path)
            differ = [k for k in meta.keys() | old.keys() if old.get(k) != meta.get(k)]
            if differ:
                raise CheckpointError(
                    f"checkpoint {self.directory} belongs to a different sweep ("
                    + "; ".join(f"{k}: {old.get(k)!r} there, {meta.get(k)!r} here"
                                for k in sorted(differ))
                    + "): use another --checkpoint folder")
        else:
            path.write_text(json.dumps(meta, indent=1))

    @staticmethod
    def _read(path: Path) -> dict[str, Any]:
        try:
            data = json.loads(path.read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise CheckpointError(f"checkpoint file {path} is unreadable or truncated "
                                  f"({exc}); delete it to recompute that task") from None
        if not isinstance(data, dict):
            raise CheckpointError(f"checkpoint file {path} is not a gelucheck checkpoint")
        return data

    @staticmethod
    def _path(directory: Path, task: tuple[int, int]) -> Path:
        return directory / f"task_{task[0]:08x}_{task[1]:08x}.json"

    def done(self, task: tuple[int, int]) -> ChunkStats | None:
        """The result of a finished task, checked; None when it has not run."""
        if self.directory is None or not self._path(self.directory, task).exists():
            return None
        path = self._path(self.directory, task)
        saved = self._read(path)
        result = saved.get("result")
        if saved.get("checksum") != _digest([saved.get("sweep"), result]):
            raise CheckpointError(f"checkpoint file {path}: its checksum does not match its "
                                  "contents (edited or damaged); delete it to recompute")
        if saved.get("sweep") != self.sweep_digest:
            raise CheckpointError(f"checkpoint file {path} was written by another sweep (other "
                                  "implementations, versions or range); delete it or use "
                                  "another --checkpoint folder")
        if not isinstance(result, dict):
            raise CheckpointError(f"checkpoint file {path} holds no task's statistics; delete "
                                  "it to recompute that task")
        if [result.get("start"), result.get("stop")] != list(task):
            raise CheckpointError(f"checkpoint file {path} holds the task "
                                  f"{[result.get('start'), result.get('stop')]}, not {list(task)} "
                                  "(copied over another task's name?)")
        try:
            return ChunkStats.from_data(result)
        except (KeyError, TypeError, ValueError) as exc:
            raise CheckpointError(f"checkpoint file {path} does not hold a task's statistics "
                                  f"({exc!r}); delete it to recompute that task") from None

    def save(self, stats: ChunkStats) -> None:
        if self.directory is None:
            return
        path = self._path(self.directory, (stats.start, stats.stop))
        result = stats.to_data()
        saved = {"sweep": self.sweep_digest, "result": result,
                 "checksum": _digest([self.sweep_digest, result])}
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(saved))
        os.replace(tmp, path)  # atomic: a killed sweep leaves whole files or none

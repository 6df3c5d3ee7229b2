"""A search's checkpoint (``--checkpoint DIR``): each finished round's results in a file of
their own, so that a stopped search, run again with the same options, reads its rounds back
instead of computing them - the rounds are fixed by the seed and the budget, so the resumed
search is the same search. A folder of another search, or a round file that does not match
its round, is refused with the file named."""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from .. import __version__
from ..backends import Implementation
from ..backends.registry import backend_version
from ..errors import UsageError
from ..sweep.worker import Spec
from .cells import Cell
from .strategy import Runner
from .task import Candidate, CellResult

FORMAT = 1


def wrap(run: Runner, directory: str | None, spec: Spec, impl: Implementation,
         seed: int) -> Runner:
    """``run`` (a search of ``impl``, which workers rebuild from ``spec``) with its rounds
    kept in (and read back from) a folder of ``directory``."""
    if directory is None:
        return run
    function = impl.function
    meta = {"format": FORMAT, "gelucheck": __version__, "spec": spec,
            "function": function.name, "seed": seed, "version": backend_version(impl)}
    name = hashlib.sha256(json.dumps(meta, sort_keys=True).encode()).hexdigest()[:16]
    folder = Path(directory) / f"search-{impl.id.replace(':', '-')}-{function.name}-{name}"
    folder.mkdir(parents=True, exist_ok=True)
    _agree(folder / "search.json", meta)
    rounds = iter(range(1 << 62))

    def runner(cells: list[Cell], samples: int | None, seed: int) -> list[CellResult]:
        path = folder / f"round-{next(rounds):06d}.json"
        key = hashlib.sha256(json.dumps([[list(_cell(c)) for c in cells], samples, seed]
                                        ).encode()).hexdigest()
        if path.exists():
            return _read(path, key)
        results = run(cells, samples, seed)
        partial = path.with_suffix(".partial")
        partial.write_text(json.dumps({"key": key, "results": [_data(r) for r in results]}))
        os.replace(partial, path)  # a round file is whole or absent
        return results

    return runner


def _agree(path: Path, meta: dict[str, Any]) -> None:
    if not path.exists():
        path.write_text(json.dumps(meta, indent=1))
        return
    try:
        stored = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise UsageError(f"{path}: not a gelucheck search checkpoint ({exc})") from None
    if stored != meta:
        raise UsageError(f"{path}: a checkpoint of another search ({stored}); give another "
                         "--checkpoint folder or remove it")


def _cell(c: Cell) -> tuple[int, int, int, int]:
    return c.sign, c.binade, c.level, c.index


def _data(r: CellResult) -> dict[str, Any]:
    return {"cell": list(_cell(r.cell)), "evaluated": r.evaluated,
            "worst": [[c.x.hex(), c.y.hex(), c.error, c.doubt] for c in r.worst],
            "implementation_s": r.implementation_s, "reference_s": r.reference_s}


def _read(path: Path, key: str) -> list[CellResult]:
    try:
        data = json.loads(path.read_text())
        if data["key"] != key:
            raise ValueError("its round is not this search's")
        return [CellResult(Cell(*d["cell"]), d["evaluated"],
                           tuple(Candidate(float.fromhex(x), float.fromhex(y), e, b)
                                 for x, y, e, b in d["worst"]),
                           d["implementation_s"], d["reference_s"])
                for d in data["results"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"{path}: a damaged search checkpoint ({exc}); remove it to compute "
                         "that round again") from None

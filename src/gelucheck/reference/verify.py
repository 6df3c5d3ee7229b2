"""``gelucheck reference verify``: the stored data against its manifest, mpmath and Arb."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import ReferenceDataError
from ..formats import FORMATS, get_format
from ..functions import FUNCTIONS, get_function
from . import arbref, store
from .build import compute_table, provenance

DEFAULT_SUBSET = 300  # inputs per format re-derived without --full


@dataclass
class Mismatch:
    file: str
    what: str
    x_hex: str
    stored: str
    expected: str

    def __str__(self) -> str:
        return (f"{self.file}: {self.what} at x={self.x_hex}: stored {self.stored}, "
                f"expected {self.expected}")


@dataclass
class Report:
    problems: list[str] = field(default_factory=list)
    mismatches: list[Mismatch] = field(default_factory=list)
    checked: dict[str, int] = field(default_factory=dict)  # format/plan -> inputs re-derived
    functions: dict[str, int] = field(default_factory=dict)  # format/plan -> functions
    arb_certified: dict[str, int] = field(default_factory=dict)  # format -> values proven
    arb_uncertified: dict[str, list[str]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.problems and not self.mismatches


def _describe(fmt, name: str, values: np.ndarray, i: int) -> str:
    if name.endswith(".rounded"):
        v = fmt.from_bits(values[i])
        return f"{float(v)!r} ({fmt.hex(v)})"
    return repr(float(values[i]))


def compare(table: store.Table, fresh: store.Table, indices: np.ndarray, file: str,
            limit: int = 10) -> list[Mismatch]:
    """Stored vs freshly derived values at ``indices`` (fresh is computed at exactly those)."""
    fmt = table.fmt
    out = []
    for name in (n for n in fresh.arrays if n != "x"):
        stored, expected = table.arrays[name][indices], fresh.arrays[name]
        if name.endswith(".rounded"):
            bad = stored != expected
        else:  # float arrays: equal bit for bit (NaN never occurs in the data)
            bad = stored.view(np.uint64) != expected.view(np.uint64)
        for j in np.flatnonzero(bad)[:limit]:
            out.append(Mismatch(file, name, fmt.hex(fmt.from_bits(table.arrays["x"][indices[j]])),
                                _describe(fmt, name, stored, j),
                                _describe(fmt, name, expected, j)))
    out.sort(key=lambda m: int(m.x_hex, 16))
    return out[:limit]


def verify(dtypes: list[str] | None = None, full: bool = False, directory: Path | None = None,
           workers: int = 2, arb: bool = True, progress: bool = True, seed: int = 0,
           functions: list[str] | None = None) -> Report:
    directory = Path(directory or store.default_directory())
    report = Report()
    try:
        manifest = store.read_manifest(directory)
    except ReferenceDataError as exc:
        report.problems.append(str(exc))
        return report
    report.problems += _provenance_problems(manifest)
    files = manifest.get("files", {})
    chosen = [get_function(f) for f in functions] if functions else list(FUNCTIONS.values())
    for fmt in [get_format(d) for d in (dtypes or FORMATS)]:
        for plan, wanted in store.by_plan(chosen):
            _verify_table(fmt, plan, wanted, files, directory, full, workers, arb, progress,
                          seed, report)
    return report


def _verify_table(fmt, plan, wanted, files, directory, full, workers, arb, progress, seed,
                  report: Report) -> None:
    # each file with the function whose values it holds (None: the plan's inputs)
    owners = {store.inputs_file(fmt, plan): None, **{store.function_file(fmt, f): f
                                                     for f in wanted}}
    relatives = list(owners)
    problems = []
    for rel in relatives:
        if rel not in files:
            problems.append(f"{rel}: not in the manifest")
        elif not (directory / rel).exists():
            problems.append(f"{directory / rel}: missing; regenerate with "
                            f"`{store.REBUILD} --dtype {fmt.name}`")
    if problems:
        report.problems += problems
        return
    try:
        table = store.load(fmt, plan, directory, checked=False)
    except ReferenceDataError as exc:
        report.problems.append(str(exc))
        return
    for rel in relatives:
        if store.file_checksum(rel, directory) != files[rel].get("sha256"):
            report.problems.append(_locate_edit(table, rel, owners[rel], files[rel], workers))
            return
        problems += store.manifest_problems(directory, rel, files[rel])
        if rel != relatives[0] and files[rel].get("inputs_sha256") != files[relatives[0]]["sha256"]:
            problems.append(f"{rel}: computed at other inputs than {relatives[0]} holds")
    if problems:
        report.problems += problems
        return
    if full:
        indices = np.arange(len(table))
    else:
        rng = np.random.default_rng(seed)
        indices = np.sort(rng.choice(len(table), min(DEFAULT_SUBSET, len(table)),
                                     replace=False))
    fresh = compute_table(fmt, table.x[indices], workers, progress,
                          label=f"verify {fmt.name} {plan.name}", plan=plan, functions=wanted)
    name = f"{fmt.name}/{plan.name}"
    report.mismatches += compare(table, fresh, indices, name)
    report.checked[name] = len(indices)
    report.functions[name] = len(wanted)
    if arb and arbref.available():
        _arb_check(table, indices, name, report, wanted)


def _provenance_problems(manifest: dict) -> list[str]:
    """The working precision the manifest records must be the one this code would use: data
    built with other settings was not proven by the loop this version runs."""
    expected = provenance()["working_precision_bits"]
    recorded = manifest.get("working_precision_bits")
    if recorded != expected:
        return [f"manifest: working_precision_bits {recorded!r}, this version builds with "
                f"{expected!r}"]
    if manifest.get("format_version") != store.FORMAT_VERSION:
        return [f"manifest: format_version {manifest.get('format_version')!r}, expected "
                f"{store.FORMAT_VERSION}"]
    return []


def _locate_edit(table: store.Table, name: str, owner, entry: dict, workers: int) -> str:
    """Name the first entry of one file (of ``owner``'s values, or the inputs) that differs
    from what the manifest recorded."""
    changed = store.first_changed_entry(table.file_arrays(owner), entry)
    if changed is None:
        return f"{name}: checksum differs from the manifest (file rewritten, same contents?)"
    array, start = changed
    block = np.arange(start, min(start + entry["block"], len(table)))
    if len(block):
        fresh = compute_table(table.fmt, table.x[block], workers, progress=False,
                              plan=table.plan, functions=table.functions)
        found = compare(table, fresh, block, name, limit=1)
        if found:
            return f"{found[0]} (checksum mismatch)"
    return (f"{name}: checksum mismatch; array {array!r} changed in entries "
            f"{start}..{start + entry['block'] - 1}")


def _arb_check(table: store.Table, indices: np.ndarray, name: str, report: Report,
               functions) -> None:
    fmt = table.fmt
    certified, uncertified = 0, []
    xs = table.x[indices]
    for fn in (f.name for f in functions if f.arb is not None):
        stored = table.arrays[f"{fn}.rounded"][indices]
        for x, s in zip(xs, stored):
            proven = arbref.certify(fn, float(x), fmt)
            if proven is None:
                uncertified.append(f"{fn}({fmt.hex(x)})")
            elif proven != int(s):
                report.mismatches.append(Mismatch(
                    name, f"{fn}.rounded vs Arb", fmt.hex(x),
                    f"{float(fmt.from_bits(s))!r} ({fmt.hex(fmt.from_bits(s))})",
                    f"{float(fmt.from_bits(proven))!r} ({fmt.hex(fmt.from_bits(proven))})"))
            else:
                certified += 1
    report.arb_certified[name] = certified
    report.arb_uncertified[name] = uncertified

"""The gelucheck pytest plugin (registered through the ``pytest11`` entry point).

It parametrizes tests that ask for ``accuracy_case`` (implementation × dtype) or
``drift_case`` (exact GELU × tanh form × dtype) over the backends, dtypes and functions
chosen with --gelucheck-backend/-dtype/-function (or GELUCHECK_BACKEND/_DTYPE/_FUNCTION,
comma separated, for tox), and over a user's own callable with --gelucheck-impl MOD:FN.
Every option is prefixed, so it coexists with a project's own ``--backend``; a bad value in a
GELUCHECK_* variable is an error of the gelucheck tests that use it, never of another suite.
Results travel in each report's user_properties, so the accuracy table in the terminal summary
is whole under pytest-xdist too.
"""
from __future__ import annotations

import os
import warnings
from typing import TYPE_CHECKING

import pytest

# Imported at load time, not in hooks: numpy must not be imported first inside a test that
# pytester isolates (it restores sys.modules afterwards, and numpy cannot load twice).
from . import published
from .budgets import DEFAULT_MAX_ULP
from .report import jsonio, tables
from .shared_options import (
    add_budgets_option,
    add_impl_options,
    add_kernel_tier_option,
    add_range_option,
    one_kernel_tier,
    ulps,
)

if TYPE_CHECKING:
    from .backends import Implementation
    from .functions import Function
    from .sweep.stats import ChunkStats

OPTIONS = {"backend": "GELUCHECK_BACKEND", "dtype": "GELUCHECK_DTYPE",
           "function": "GELUCHECK_FUNCTION"}
KERNEL_TIER_ENV = "GELUCHECK_KERNEL_TIER"
PROPERTY = "gelucheck"
NOTE = "gelucheck-note"
SWEEP = "gelucheck-sweep"  # exhaustive chunk results, merged by the controller
COMPILES = "compiles"  # the marker of items whose implementation compiles first (slow)


def pytest_addoption(parser):
    group = parser.getgroup("gelucheck")
    for name, env in OPTIONS.items():
        group.addoption(f"--gelucheck-{name}", action="append", default=None,
                        help=f"{name}s to check (repeatable or comma separated; env {env})")
    add_impl_options(group.addoption, "gelucheck-")
    group.addoption("--gelucheck-max-ulp", type=ulps, default=DEFAULT_MAX_ULP, metavar="N",
                    help="what a result with no recorded budget is held to: max ulp error N "
                    f"(default {DEFAULT_MAX_ULP:g}: correctly rounded, the special inputs at "
                    "their limits, x* on the minimum's plateau, no wrong sign)")
    add_budgets_option(group.addoption, "gelucheck-",
                       " (default: $GELUCHECK_BUDGETS, else gelucheck's own)")
    add_kernel_tier_option(group.addoption, "gelucheck-")
    add_range_option(group.addoption, "--gelucheck-sweep-range")
    group.addoption("--gelucheck-scheduler", default=None, metavar="ADDRESS",
                    help="exhaustive tests: run each chunk on the Dask cluster whose scheduler "
                    "is at ADDRESS (tcp://host:port; the cluster extra)")
    group.addoption("--gelucheck-sweep-json", default=None, metavar="FILE",
                    help="exhaustive tests: write the merged sweep result here")
    group.addoption("--gelucheck-reference-dir", default=None, metavar="DIR",
                    help="reference data folder (default: $GELUCHECK_REFERENCE, else the "
                    "data gelucheck ships)")


def _sweep_results(config, chunks_by_function: dict[str, list[ChunkStats]], span) -> list:
    """Merge the chunks that xdist workers (or hosts) computed into one result per
    implementation, as ``gelucheck sweep`` would have written it."""
    from .backends import find, load_user
    from .sweep.stats import merge_all, results, split_key

    out = []
    for chunks in chunks_by_function.values():
        merged = merge_all(chunks)
        if merged is None:
            continue
        impls = []
        for key in merged.implementations:
            spec, fn = split_key(key)
            if spec.startswith("user:"):  # --gelucheck-impl
                impls.append(load_user(spec.removeprefix("user:"), fn,
                                       config.getoption("--gelucheck-framework")))
            else:
                impls += find(spec, fn)
        out += results(merged, impls, span)
    return out


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    _cap_kernels(config)
    config.addinivalue_line("markers", "exhaustive: one chunk of an exhaustive float32 sweep")
    config.addinivalue_line("markers", "consistency: one call path of one implementation")
    config.addinivalue_line("markers", f"{COMPILES}: an implementation that compiles its "
                            "kernels before measuring (torch.compile): slow to start")
    directory = config.getoption("--gelucheck-reference-dir")
    if directory:
        os.environ["GELUCHECK_REFERENCE"] = directory
    config.pluginmanager.register(Collector(config), "gelucheck-collector")
    for name in OPTIONS:  # an option given by name is checked at once (its env: when used)
        if config.getoption(f"--gelucheck-{name}"):
            _choices(config)
            break


def _cap_kernels(config) -> None:
    """--gelucheck-kernel-tier (or $GELUCHECK_KERNEL_TIER): the libraries' caps, set before
    any test loads them; refused where one has already chosen its kernels otherwise."""
    from . import tiers
    from .errors import UsageError

    option = "--gelucheck-kernel-tier"
    try:  # the command line's over the ini file's addopts; twice on one of them: refused
        one_kernel_tier(option, _command_line_values(config, option))
    except UsageError as exc:
        raise pytest.UsageError(str(exc)) from None
    given = config.getoption(option)
    tier = given[-1] if given else os.environ.get(KERNEL_TIER_ENV)
    if not tier:
        return
    try:
        tiers.check(tier)
    except UsageError as exc:
        raise pytest.UsageError(f"${KERNEL_TIER_ENV}: {exc}") from None
    before = {v: os.environ.get(v) for v in (*tiers.CAP_VARIABLES, "XLA_FLAGS")}
    loaded = tiers.apply(tier)
    changed = any(os.environ.get(v) != was for v, was in before.items())
    late = [m for m in loaded if changed and not tiers.took(m, tier)]
    if late:
        raise pytest.UsageError(
            f"--gelucheck-kernel-tier {tier}: {', '.join(late)} had already loaded its kernels "
            "(imported before pytest configured gelucheck: by a conftest.py or another plugin), "
            "so its results would be of another tier: import it later, or set the caps before "
            f"Python starts: {tiers.assignments(tier)}")


def _command_line_values(config, option: str) -> list[str]:
    args = list(config.invocation_params.args)
    return [value for i, a in enumerate(args)
            for value in ([args[i + 1]] if a == option and i + 1 < len(args) else
                          [a.partition("=")[2]] if a.startswith(option + "=") else [])]


def _choices(config) -> tuple[list[str], list, list]:
    """(backend names, Formats, Functions) chosen by options or environment variables."""
    from .backends import backend_names
    from .formats import FORMATS
    from .functions import FUNCTIONS

    return (selection(config, "backend", backend_names()),
            [FORMATS[n] for n in selection(config, "dtype", list(FORMATS))],
            [FUNCTIONS[n] for n in selection(config, "function", list(FUNCTIONS))])


def selection(config, name: str, valid: list[str]) -> list[str]:
    given = config.getoption(f"--gelucheck-{name}")
    values = given or [os.environ.get(OPTIONS[name], "")]
    chosen = [v.strip() for value in values for v in value.split(",") if v.strip()]
    where = f"--gelucheck-{name}" if given else f"${OPTIONS[name]}"
    bad = [v for v in chosen if v not in valid]
    if bad:
        raise pytest.UsageError(f"{where}: unknown {name} {bad}; valid choices: "
                                f"{', '.join(valid)}")
    if twice := sorted({v for v in chosen if chosen.count(v) > 1}):  # (each test twice)
        raise pytest.UsageError(f"{where}: {name} {twice} given twice; give each once")
    return chosen


_SELECTION = pytest.StashKey[tuple]()


def _selected_implementations(config):
    """(implementations, formats, skipped) the options and environment choose: resolved once
    a session (every parametrized test and the budgets fixture ask), a user's callables
    imported once; an error is raised again at each ask, for the test that asked."""
    if _SELECTION not in config.stash:
        config.stash[_SELECTION] = _resolve_selection(config)
    return config.stash[_SELECTION]


def _resolve_selection(config):
    from .backends import UserOptions, implementations
    from .errors import UsageError

    backends, dtypes, functions = _choices(config)
    specs = config.getoption("--gelucheck-impl") or []
    try:
        chosen = implementations(backends or None, specs, functions or None,
                                 UserOptions(config.getoption("--gelucheck-framework")),
                                 every_backend=not specs)
    except UsageError as exc:
        raise pytest.UsageError(f"--gelucheck-impl: {exc}" if specs else str(exc)) from None
    skipped = chosen.unavailable + [(f"{b}-{f}", f"{b} computes no {f}: {why}")
                                    for b, f, why in chosen.not_applicable]
    return chosen.implementations, dtypes or _all_formats(), skipped


def _all_formats():
    from .formats import FORMATS

    return list(FORMATS.values())


def _marks(*impls) -> list:
    """An implementation that compiles before its first call (it has a warm-up) costs a
    compile per dtype and direction: its items carry the ``compiles`` marker, so that a
    project can keep them out of a quick run (``-m 'not compiles'``) and run them apart."""
    return [pytest.mark.compiles] if any(i is not None and i.warm_up for i in impls) else []


def _skip_params(skipped, *marks):
    return [pytest.param(None, marks=[pytest.mark.skip(reason=f"backend {n}: {why}"), *marks],
                         id=f"{n}-unavailable") for n, why in skipped]


def pytest_generate_tests(metafunc):
    if "accuracy_case" in metafunc.fixturenames:
        impls, dtypes, skipped = _selected_implementations(metafunc.config)
        wanted = getattr(metafunc.function, "gelucheck_functions", None)
        params = [pytest.param((i, d), id=f"{i.id}-{i.function.name}-{d.name}",
                               marks=_marks(i))
                  for i in impls for d in dtypes
                  if d in i.dtypes and (wanted is None or i.function.name in wanted)]
        metafunc.parametrize("accuracy_case", params + _skip_params(skipped))
    if "sweep_case" in metafunc.fixturenames:
        _sweep_params(metafunc)
    if "consistency_case" in metafunc.fixturenames:
        _consistency_params(metafunc)
    if "drift_case" in metafunc.fixturenames:
        from .checks.drift import pairs

        impls, dtypes, skipped = _selected_implementations(metafunc.config)
        params = [pytest.param((e, t, d), marks=_marks(e, t),
                               id=f"{e.id if e else 'reference:gelu'}-vs-{t.id}-{d.name}")
                  for e, t in pairs(impls) for d in dtypes
                  if d in t.dtypes and (e is None or d in e.dtypes)]
        metafunc.parametrize("drift_case", params + _skip_params(skipped))


def _consistency_params(metafunc):
    """(implementation, format, path): one item per path, ids such as
    torch:F.gelu-gelu-float32-one-element (marker ``consistency``, out of the default run)."""
    from .checks.consistency import generic_paths

    impls, dtypes, skipped = _selected_implementations(metafunc.config)
    params = []
    for impl in impls:
        for fmt in dtypes:
            if fmt not in impl.dtypes:
                continue
            names = list(generic_paths(impl, fmt)) + list(impl.paths(fmt) if impl.paths else [])
            params += [pytest.param((impl, fmt, name),
                                    marks=[pytest.mark.consistency, *_marks(impl)],
                                    id=f"{impl.id}-{impl.function.name}-{fmt.name}-{name}")
                       for name in dict.fromkeys(names)]
    metafunc.parametrize("consistency_case",
                         params + _skip_params(skipped, pytest.mark.consistency))


def _sweep_params(metafunc):
    from .errors import UsageError
    from .formats import FLOAT32
    from .sweep.reference import require
    from .sweep.runner import parse_range, tasks

    impls, _, skipped = _selected_implementations(metafunc.config)
    impls = [i for i in impls if FLOAT32 in i.dtypes]
    span = parse_range(metafunc.config.getoption("--gelucheck-sweep-range"))
    by_function: dict[Function, list[Implementation]] = {}
    for i in impls:
        by_function.setdefault(i.function, []).append(i)
    params, refused = [], []
    for fn, group in by_function.items():
        try:
            require(fn)
        except UsageError as exc:  # (no numba for erf's loops, say): skipped with the reason
            refused.append(pytest.param(None, marks=[pytest.mark.skip(reason=str(exc)),
                                                     pytest.mark.exhaustive],
                                        id=f"{fn.name}-no-sweep"))
            continue
        params += [pytest.param((fn, group, task), marks=pytest.mark.exhaustive,
                                id=f"{fn.name}-{task[0]:08x}-{task[1]:08x}")
                   for task in tasks(*span)]
    metafunc.parametrize("sweep_case", params + refused
                         + _skip_params(skipped, pytest.mark.exhaustive))


def only_functions(*functions):
    """Decorator: parametrize this test's accuracy_case over these functions only."""
    def mark(fn):
        fn.gelucheck_functions = functions
        return fn
    return mark


@pytest.fixture(scope="session")
def gelucheck_budgets(request):
    from . import budgets

    path = _budgets_path(request.config)
    loaded = budgets.load(path)
    loaded.default_max_ulp = request.config.getoption("--gelucheck-max-ulp")
    users = [i for i in _selected_implementations(request.config)[0] if i.backend == "user"]
    for line in budgets.stale_warnings(loaded, path or budgets.DEFAULT_PATH, users):
        warnings.warn(f"budgets {line}", stacklevel=1)
    return loaded


def _budgets_path(config) -> str | None:
    """--gelucheck-budgets, else $GELUCHECK_BUDGETS (None: gelucheck's own file)."""
    return config.getoption("--gelucheck-budgets") or os.environ.get("GELUCHECK_BUDGETS")


@pytest.fixture
def record_gelucheck(request):
    """Attach a result (and optional note) to this test's report for the summary."""
    def record(result, note: str | None = None):
        request.node.user_properties.append((PROPERTY, jsonio.dumps([result])))
        if note:
            request.node.user_properties.append((NOTE, f"{request.node.nodeid}: {note}"))
    return record


class Collector:
    """Gathers the results that tests attached to their reports (on the xdist controller too)."""

    def __init__(self, config):
        self.config = config
        self.results: list = []
        self.notes: list[str] = []
        self.chunks: dict[str, list[ChunkStats]] = {}
        self.sweep_verdicts: list[str] = []

    def pytest_runtest_logreport(self, report):
        if report.when != "call":
            return
        for key, value in report.user_properties:
            if key == PROPERTY:
                self.results += jsonio.loads(value)
            elif key == NOTE:
                self.notes.append(value)
            elif key == SWEEP:
                from .sweep.stats import ChunkStats

                chunk = ChunkStats.from_data(jsonio.decode(value))
                self.chunks.setdefault(chunk.function, []).append(chunk)

    def pytest_sessionfinish(self, session):
        """The exhaustive sweep as a CI gate: merged here (on the xdist controller), judged
        against the sweep budgets; a figure worse than recorded fails the session."""
        if not self.chunks:
            return
        from . import budgets, judge
        from .sweep.runner import parse_range

        span = parse_range(self.config.getoption("--gelucheck-sweep-range"))
        self.merged = _sweep_results(self.config, self.chunks, span)
        gate = budgets.load(_budgets_path(self.config))
        gate.default_max_ulp = self.config.getoption("--gelucheck-max-ulp")
        for r in self.merged:
            failed, line = judge.sweep_line(r, gate)
            if line:
                self.sweep_verdicts.append(f"FAILED {line}" if failed else line)
            if failed:
                session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter):
        from .results import AccuracyResult

        accuracy = [r for r in self.results if isinstance(r, AccuracyResult) and r.figures]
        if accuracy:
            terminalreporter.section("gelucheck accuracy (max / mean ulp)")
            header, body = tables.accuracy_rows(accuracy)
            terminalreporter.write_line(tables.plain(header, sorted(body)))  # xdist: any order
        if self.chunks:
            self._sweep_summary(terminalreporter)
        if self.notes:
            terminalreporter.section("gelucheck: better than budget (tighten it)")
            for note in self.notes:
                terminalreporter.write_line(note)

    def _sweep_summary(self, terminalreporter):
        merged = self.merged
        terminalreporter.section("gelucheck exhaustive float32 sweep")
        for line in self.sweep_verdicts:
            terminalreporter.write_line(line)
        covered = {f: sum(c.stop - c.start for c in cs) for f, cs in self.chunks.items()}
        for r in merged:
            function = r.identity.function
            if r.figures is None:
                terminalreporter.write_line(f"{r.label}: ERROR {r.failure.reason}")
                continue
            terminalreporter.write_line(f"{r.identity.id} {function}: "
                                        f"{tables.sweep_figures(r, covered[function])}")
            documented = published.beside(r)
            if documented:
                terminalreporter.write_line(f"  {documented}")
        path = self.config.getoption("--gelucheck-sweep-json")
        if path:
            jsonio.write(merged, path)
            terminalreporter.write_line(f"written to {path}")

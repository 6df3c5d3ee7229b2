"""The gelucheck pytest plugin (registered through the ``pytest11`` entry point).

It parametrizes tests that ask for ``accuracy_case`` (implementation × dtype) or
``drift_case`` (exact GELU × tanh form × dtype) over the backends, dtypes and functions
chosen with --backend/--dtype/--function or GELUCHECK_BACKEND/_DTYPE/_FUNCTION (comma
separated, for tox). Results travel in each report's user_properties, so the accuracy table
in the terminal summary is whole under pytest-xdist too.
"""
from __future__ import annotations

import os

import pytest

# Imported at load time, not in hooks: numpy must not be imported first inside a test that
# pytester isolates (it restores sys.modules afterwards, and numpy cannot load twice).
from .report import jsonio, tables

OPTIONS = {"backend": "GELUCHECK_BACKEND", "dtype": "GELUCHECK_DTYPE",
           "function": "GELUCHECK_FUNCTION"}
PROPERTY = "gelucheck"
NOTE = "gelucheck-note"


def pytest_addoption(parser):
    group = parser.getgroup("gelucheck")
    for name, env in OPTIONS.items():
        group.addoption(f"--{name}", action="append", default=None,
                        help=f"{name}s to check (repeatable or comma separated; env {env})")
    group.addoption("--budgets", default=None,
                    help="budgets file (default: $GELUCHECK_BUDGETS or tests/budgets.toml)")
    group.addoption("--reference-dir", default=None,
                    help="reference data folder (default: $GELUCHECK_REFERENCE or reference/)")


def pytest_configure(config):
    directory = config.getoption("--reference-dir")
    if directory:
        os.environ["GELUCHECK_REFERENCE"] = directory
    config.pluginmanager.register(Collector(), "gelucheck-collector")
    _choices(config)  # a misspelt name is a usage error at once, not a collection error


def _choices(config) -> tuple[list[str], list[str], list[str]]:
    from .backends import backend_names
    from .formats import FORMATS
    from .functions import FUNCTIONS

    return (selection(config, "backend", backend_names()),
            selection(config, "dtype", list(FORMATS)),
            selection(config, "function", list(FUNCTIONS)))


def selection(config, name: str, valid: list[str]) -> list[str]:
    values = config.getoption(f"--{name}") or [os.environ.get(OPTIONS[name], "")]
    chosen = [v.strip() for value in values for v in value.split(",") if v.strip()]
    bad = [v for v in chosen if v not in valid]
    if bad:
        raise pytest.UsageError(f"unknown {name} {bad}; valid choices: {', '.join(valid)}")
    return chosen or list(valid)


def _selected_implementations(config):
    from .backends import get_backend

    backends, dtypes, functions = _choices(config)
    found, skipped = [], []
    for name in backends:
        b = get_backend(name)
        if not b.available:
            skipped.append((name, b.reason))
        found += [i for i in b.implementations if i.function in functions]
    return found, dtypes, skipped


def _skip_params(skipped):
    return [pytest.param(None, marks=pytest.mark.skip(reason=f"backend {n}: {why}"),
                         id=f"{n}-unavailable") for n, why in skipped]


def pytest_generate_tests(metafunc):
    if "accuracy_case" in metafunc.fixturenames:
        impls, dtypes, skipped = _selected_implementations(metafunc.config)
        wanted = getattr(metafunc.function, "gelucheck_functions", None)
        params = [pytest.param((i, d), id=f"{i.id}-{i.function}-{d}")
                  for i in impls for d in dtypes
                  if d in i.dtypes and (wanted is None or i.function in wanted)]
        metafunc.parametrize("accuracy_case", params + _skip_params(skipped))
    if "drift_case" in metafunc.fixturenames:
        from .checks.drift import pairs

        impls, dtypes, skipped = _selected_implementations(metafunc.config)
        params = [pytest.param((e, t, d), id=f"{e.id if e else 'reference:gelu'}-vs-{t.id}-{d}")
                  for e, t in pairs(impls) for d in dtypes
                  if d in t.dtypes and (e is None or d in e.dtypes)]
        metafunc.parametrize("drift_case", params + _skip_params(skipped))


def only_functions(*functions):
    """Decorator: parametrize this test's accuracy_case over these functions only."""
    def mark(fn):
        fn.gelucheck_functions = functions
        return fn
    return mark


@pytest.fixture(scope="session")
def gelucheck_budgets(request):
    from . import budgets

    path = request.config.getoption("--budgets") or os.environ.get("GELUCHECK_BUDGETS")
    return budgets.load(path)


@pytest.fixture
def record_gelucheck(request):
    """Attach a result (and optional note) to this test's report for the summary."""
    def record(result: dict, note: str | None = None):
        request.node.user_properties.append((PROPERTY, jsonio.dumps([result])))
        if note:
            request.node.user_properties.append((NOTE, f"{request.node.nodeid}: {note}"))
    return record


class Collector:
    """Gathers the results that tests attached to their reports (on the xdist controller too)."""

    def __init__(self):
        self.results: list[dict] = []
        self.notes: list[str] = []

    def pytest_runtest_logreport(self, report):
        if report.when != "call":
            return
        for key, value in report.user_properties:
            if key == PROPERTY:
                self.results += jsonio.loads(value)
            elif key == NOTE:
                self.notes.append(value)

    def pytest_terminal_summary(self, terminalreporter):
        accuracy = [r for r in self.results if r.get("kind") == "accuracy" and "max_ulp" in r]
        if accuracy:
            terminalreporter.section("gelucheck accuracy (max / mean ulp)")
            header, body = tables.accuracy_rows(accuracy)
            terminalreporter.write_line(tables.plain(header, sorted(body)))  # xdist: any order
        if self.notes:
            terminalreporter.section("gelucheck: better than budget (tighten it)")
            for note in self.notes:
                terminalreporter.write_line(note)

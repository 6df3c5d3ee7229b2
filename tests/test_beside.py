"""report's backends built on torch, measured in a process of their own beside the others
(commands/beside.py): the same results in the same order as measured in turn, and measured
here where that process dies. The families are stood in for by light backends, so that the
whole report is a few backends' in one dtype."""
import json
import os
import sys

import pytest

from gelucheck import backends
from gelucheck.backends import registry
from gelucheck.cli import main
from gelucheck.commands import beside

pytest.importorskip("scipy", reason="scipy is not installed")
pytestmark = pytest.mark.skipif(beside._cores() < 2 or not sys.platform.startswith("linux"),
                                reason="a process beside needs two cores of Linux")
FEW = ["numpy", "scipy", "variants"]


@pytest.fixture
def few_backends(monkeypatch):
    """Every backend is these three; numpy (the first, with a tanh form, so with drift of
    its own) stands for the torch family."""
    for module in (backends, registry):
        monkeypatch.setattr(module, "backend_names", lambda: list(FEW))
    monkeypatch.setattr(beside, "TORCH_FAMILY", ("numpy",))


def _report(tmp_path, name, capsys):
    path = tmp_path / f"{name}.json"
    assert main(["report", "--no-progress", "--dtype", "float16", "--json", str(path)]) == 0
    return json.loads(path.read_text())["results"], capsys.readouterr()


def test_the_results_are_those_of_every_backend_in_turn_in_the_same_order(
        few_backends, tmp_path, monkeypatch, capsys):
    assert beside.names(_Args()) == ["numpy"]
    apart, _ = _report(tmp_path, "apart", capsys)
    monkeypatch.setattr(beside, "names", lambda args: [])
    in_turn, _ = _report(tmp_path, "in_turn", capsys)
    order = [r["backend"] for r in apart if r["kind"] == "accuracy"]
    assert sorted(set(order), key=order.index) == FEW  # numpy's first, as in turn
    assert apart == in_turn
    drift = [r for r in apart if r["kind"] == "drift"]
    assert drift and any(r["tanh_implementation"].startswith("numpy:") for r in drift)


_HERE = os.getpid()
_MEASURE = beside._measure


def _dies_beside(*args):
    """beside._measure that dies in any process but the test's (module-level: a pool pickles
    what it runs by name)."""
    if os.getpid() != _HERE:
        os._exit(3)
    return _MEASURE(*args)


def test_a_process_that_dies_is_measured_here_and_said(few_backends, tmp_path, monkeypatch,
                                                       capsys):
    monkeypatch.setattr(beside, "_measure", _dies_beside)
    results, printed = _report(tmp_path, "died", capsys)
    assert "in a process of their own failed" in printed.err
    assert any(r.get("backend") == "numpy" for r in results)


class _Args:
    command, backend, function, consistency = "report", [], None, False


def test_nothing_is_measured_beside_where_a_choice_needs_every_backend_in_one_process():
    args = _Args()
    args.function = ["erf"]
    assert beside.names(args) == []
    args.function, args.consistency = None, True
    assert beside.names(args) == []
    args.consistency, args.backend = False, ["torch"]
    assert beside.names(args) == []


def _raises_beside(*args):
    if os.getpid() != _HERE:
        raise ValueError("raised beside")
    return _MEASURE(*args)


def test_an_error_raised_beside_is_raised_here(monkeypatch):
    monkeypatch.setattr(beside, "_measure", _raises_beside)
    apart = beside.Beside(_Args(), ["numpy"], [], keep_errors=False)
    with pytest.raises(ValueError, match="raised beside"):
        apart.wait(_Bar(), None)


class _Bar:
    def set_postfix_str(self, text, refresh=False):
        pass

    def update(self, n=1):
        pass

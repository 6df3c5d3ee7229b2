"""report's first minute (docs/commands/check.md): backend by backend, each loaded only when
the one before it has been measured, its figures on a terminal as soon as they are known, and
what is left out said with the option that brings it."""
import io
import re

import pytest

from gelucheck import measurement
from gelucheck.backends import Implementation
from gelucheck.cli import main
from gelucheck.formats import FORMATS


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def _erf(name):
    from scipy.special import erf

    return Implementation("user", name, "erf", lambda x: erf(x.astype("f8")).astype(x.dtype),
                          native=("float16",))


def test_a_backend_is_loaded_only_once_the_one_before_it_is_measured():
    events = []

    def groups():
        for name in ("first", "second"):
            yield name
            events.append(f"load {name}")
            yield [_erf(name)]

    def measured(done):
        events.append("measured " + ",".join(r.identity.id for r in done))

    results = measurement.run_groups(groups(), [FORMATS["float16"]], with_drift=False,
                                     progress=False, on_group=measured)
    assert events == ["load first", "measured user:first", "load second",
                      "measured user:second"]
    assert [r.identity.id for r in results] == ["user:first", "user:second"]


def test_on_a_terminal_each_backends_figures_come_before_the_report(monkeypatch, capsys):
    """The lines shown as they come carry the same figures as the report's summary."""
    pytest.importorskip("scipy", reason="scipy is not installed")
    err = _Terminal()
    monkeypatch.setattr("sys.stderr", err)
    assert main(["report", "--function", "erf", "--dtype", "float16"]) == 0
    streamed = err.getvalue().replace("\r", "\n")
    assert "first results, backend by backend (the report follows):" in streamed
    line = re.search(r"^  (scipy:special\.erf)\s+erf\s+float16 (\S+)\s+(\w+)", streamed, re.M)
    assert line, streamed
    summary = re.search(r"^scipy:special\.erf\s+erf\s+(\S+) \(", capsys.readouterr().out, re.M)
    assert summary and summary.group(1) == line.group(2)


def test_off_a_terminal_the_report_streams_nothing_and_says_its_one_line(monkeypatch, capsys):
    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    assert main(["report", "--function", "erf", "--dtype", "float16"]) == 0
    assert "first results" not in err.getvalue()
    assert re.search(r"^measuring: \d+ backends \.\.\.$", err.getvalue(), re.M)
    assert "\r" not in err.getvalue()


@pytest.mark.parametrize("argv, words", [
    (["--impl", "user_impls:gelu_float64_then_round"], "name the function your callable"),
    (["--impl", "user_impls:missing", "--function", "gelu"], "no callable 'missing'"),
])
def test_a_bad_impl_is_refused_before_any_backend_is_measured(argv, words, capsys):
    """A streamed report checks the user's --impl first, as every command does."""
    assert main(["report", "--no-progress", *argv]) == 2
    captured = capsys.readouterr()
    assert words in captured.err
    assert "gelucheck" not in captured.out  # no report was begun


def test_the_bar_counts_every_backend_named_measured_or_not(monkeypatch):
    """Off a terminal the bar says how many backends it takes; on one it must reach them all,
    an unavailable backend (named, with no group) counted as the next is named."""
    counted = []

    class _Bar:
        def update(self, n=1):
            counted.append(n)

        def set_postfix_str(self, *args, **kwargs):
            pass

        def external_write_mode(self, file=None):
            import contextlib

            return contextlib.nullcontext()

        def close(self):
            pass

    monkeypatch.setattr(measurement, "progress_bar", lambda *a, **k: _Bar())
    groups = ["first", [_erf("first")], "unavailable", "third", [_erf("third")], [_erf("own")]]
    measurement.run_groups(groups, [FORMATS["float16"]], with_drift=False, count=4)
    assert sum(counted) == 4

"""Progress bars belong on a terminal: in a log, one line per step, never a bar's frames."""
import io

from gelucheck import progress


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_off_a_terminal_a_step_is_one_line_and_no_frames(monkeypatch):
    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    bar = progress.bar(3, "measuring", unit="case")
    for _ in range(3):
        bar.update()
    bar.close()
    assert err.getvalue() == "measuring: 3 cases ...\n"


def test_on_a_terminal_the_bar_draws_and_no_line_is_added(monkeypatch):
    err = _Terminal()
    monkeypatch.setattr("sys.stderr", err)
    bar = progress.bar(2, "compiling", unit="case")
    bar.update(2)
    bar.close()
    assert "compiling" in err.getvalue() and "\r" in err.getvalue()
    assert "compiling: 2 cases ..." not in err.getvalue()


def test_a_bar_turned_off_says_nothing_anywhere(monkeypatch):
    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    progress.bar(5, "sweep", enabled=False).close()
    assert err.getvalue() == ""

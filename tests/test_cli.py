"""The command line: bad input names the valid choices; verify passes on the stored data."""
import argparse
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gelucheck.cli import main
from gelucheck.shared_options import ulps
from gelucheck.sweep.worker import TASK


@pytest.mark.parametrize("argv, valid", [
    (["reference", "build", "--dtype", "float8"], "float16, bfloat16, float32, float64"),
    (["reference", "verify", "--dtype", "fp32"], "float16, bfloat16, float32, float64"),
])
def test_bad_choices_list_the_valid_names(argv, valid, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert valid in capsys.readouterr().err


def test_verify_default_passes_and_reports_arb(capsys):
    assert main(["reference", "verify", "--dtype", "bfloat16", "--workers", "1"]) == 0
    out = capsys.readouterr().out
    assert "reference data OK" in out
    if pytest.importorskip("flint", reason="python-flint is not installed"):
        assert "Arb proved" in out


def test_verify_fails_on_a_missing_directory(tmp_path, capsys):
    assert main(["reference", "verify", "--directory", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "manifest.json: missing" in out and "FAILED" in out


@pytest.mark.slow  # a process of its own
def test_console_script_is_installed():
    out = subprocess.run([sys.executable, "-m", "gelucheck.cli", "--help"], capture_output=True,
                         text=True, check=True).stdout
    assert "reference" in out


def _command(tmp_path, *argv):
    """``python -m gelucheck`` in a process of its own, its temporary files in tmp_path."""
    tests = str(Path(__file__).parent)
    return subprocess.run([sys.executable, "-m", "gelucheck", *argv], capture_output=True,
                          text=True, cwd=tmp_path,
                          env={**os.environ, "TMPDIR": str(tmp_path),
                               "PYTHONPATH": os.pathsep.join([tests, *sys.path])})


@pytest.mark.slow
def test_the_command_leaves_with_mains_status_and_all_its_output(tmp_path, capsys):
    """The command line leaves without the interpreter's teardown (cli.run): main's status
    (0, a usage error's 2, argparse's 2 and --help's 0), every line it printed - the same as
    main gives in this process."""
    listed = _command(tmp_path, "list")
    assert main(["list"]) == 0
    assert listed.returncode == 0 and listed.stdout == capsys.readouterr().out
    refused = _command(tmp_path, "sweep", "--backend", "numpy:nothing", "--function", "gelu")
    assert refused.returncode == 2 and "numpy offers" in refused.stderr
    assert _command(tmp_path, "sweep", "--function", "nope").returncode == 2
    helped = _command(tmp_path, "--help")
    assert helped.returncode == 0 and "reference" in helped.stdout


@pytest.mark.slow  # a child process, waited on
def test_an_isolated_childs_process_and_log_are_gone_after_the_command(tmp_path):
    """An isolated implementation's child and its stderr log are cleaned up by the exit
    handlers, which the command runs before it leaves: no log is left in TMPDIR."""
    out = _command(tmp_path, "check", "--impl", "user_impls:gelu_float64_then_round",
                   "--function", "gelu", "--dtype", "bfloat16", "--isolate", "--no-progress")
    assert out.returncode == 0, out.stderr
    assert not list(tmp_path.glob("gelucheck-child-*.log"))


_EXIT_MARKER = """\
import atexit, os, pathlib
# each process that ends through the interpreter's exit handlers leaves its command line here
atexit.register(lambda: (pathlib.Path(os.environ["GELUCHECK_TEST_EXITS"]) / str(os.getpid()))
                .write_bytes(pathlib.Path("/proc/self/cmdline").read_bytes()))
"""


@pytest.mark.slow  # a sweep on two workers, in a process of its own
def test_the_commands_fork_server_ends_with_it_not_through_its_teardown(tmp_path):
    """The fork server holds the command's stdout: a pipeline reading it waits for the
    server's teardown (torch's, numba's) unless the command ends it. A sitecustomize marks
    each process that runs its exit handlers: the command does (cli.run runs them), its
    workers never do (multiprocessing ends them with os._exit), the server must not. (The
    resource tracker, which imports nothing heavy, ends as multiprocessing ends it.)"""
    site, exits = tmp_path / "site", tmp_path / "exits"
    site.mkdir()
    exits.mkdir()
    (site / "sitecustomize.py").write_text(_EXIT_MARKER)
    tests = str(Path(__file__).parent)
    two_tasks = f"0x3f800000:{0x3F800000 + 2 * TASK:#x}"  # one task would fork no worker
    done = subprocess.Popen(
        [sys.executable, "-m", "gelucheck", "sweep", "--backend", "scipy:ndtr", "--function",
         "phi", "--range", two_tasks, "--workers", "2", "--no-progress", "--json",
         str(tmp_path / "out.json")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
        env={**os.environ, "GELUCHECK_TEST_EXITS": str(exits),
             "PYTHONPATH": os.pathsep.join([str(site), tests, *sys.path])})
    out, err = done.communicate()  # (at EOF, the server is gone too)
    assert done.returncode == 0, err
    assert "scipy:ndtr phi float32" in out
    (result,) = json.loads((tmp_path / "out.json").read_text())["results"]
    assert result["engine"]["name"] == "local" and result["engine"]["workers"] == 2
    ended = {p.name: p.read_bytes() for p in exits.iterdir()}
    assert str(done.pid) in ended
    assert not [argv for argv in ended.values() if b"multiprocessing.forkserver" in argv]


# each command's least work, should the refusal be missing
_LEAST = {"check": ["--dtype", "bfloat16"], "sweep": ["--range", "0x3f800000:0x3f800100"],
          "search": ["--evaluations", "1000", "--workers", "1"]}


@pytest.mark.parametrize("command", sorted(_LEAST))
@pytest.mark.parametrize("names", [["scipy", "scipy:ndtr"], ["scipy:ndtr", "scipy"]])
def test_an_implementation_named_beside_its_backend_is_refused(command, names, capsys):
    """One of a backend's implementations beside the whole backend would be measured twice
    (or once, a name dropped silently): every command that takes --backend refuses it before
    any work, naming both. (The same name twice: the test below.)"""
    refusal = "--backend 'scipy:ndtr' is named already by --backend 'scipy'"
    argv = [command, "--function", "phi", "--no-progress", *_LEAST[command],
            *(a for n in names for a in ("--backend", n))]
    assert main(argv) == 2
    assert refusal in capsys.readouterr().err


@pytest.mark.parametrize(("argv", "refusal"), [
    (["check", "--backend", "scipy", "--dtype", "float16", "--dtype", "float16"],
     "--dtype float16 is given twice"),
    *[([c, "--function", "phi", "--backend", "scipy:ndtr", "--backend", "scipy:ndtr"],
       "--backend scipy:ndtr is given twice") for c in ("check", "sweep", "search")],
    (["check", "--backend", "scipy", "--function", "phi", "--function", "phi"],
     "--function phi is given twice"),
    (["check", "--backend", "scipy", "--max-ulp", "x<-5=2", "--max-ulp", "x<-5=2"],
     "--max-ulp x<-5=2 is given twice"),
    (["reference", "verify", "--dtype", "float16", "--dtype", "float16"],  # a subcommand's
     "--dtype float16 is given twice"),
    (["study", "moons", "--activation", "relu", "--activation", "relu"],
     "--activation relu is given twice"),
])
def test_a_repeatable_option_given_one_value_twice_is_refused(argv, refusal, capsys):
    """The value would be measured (trained, merged) twice, or once with the other dropped:
    refused as the command line is read, before any work."""
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    assert refusal in capsys.readouterr().err


@pytest.mark.parametrize(("text", "value"), [("0", 0.0), ("0.5", 0.5), ("inf", math.inf),
                                             ("nan", None), ("-1", None), ("many", None)])
def test_a_number_of_ulps_is_0_or_more_and_never_nan(text, value):
    """The plugin's --gelucheck-max-ulp: NaN would let every figure through."""
    if value is None:
        with pytest.raises(argparse.ArgumentTypeError, match="need a number of ulps, 0 or more"):
            ulps(text)
    else:
        assert ulps(text) == value


@pytest.mark.parametrize("value", ["-1", "0", "nan", "inf", "soon"])
def test_a_timeout_that_is_not_a_time_is_refused(value, capsys):
    """NaN waited for ever on a call, and 0 or less failed every implementation."""
    with pytest.raises(SystemExit) as exited:
        main(["check", "--backend", "scipy:ndtr", "--timeout", value])
    assert exited.value.code == 2
    assert f"--timeout: {value!r}: need a number of seconds above 0" in capsys.readouterr().err


@pytest.mark.parametrize(("limits", "refusal"), [
    (["1", "2"], "--max-ulp gives every input two limits (1 and 2)"),
    (["x<-5=1", "0.5", "x<-5=3"], "--max-ulp gives region x<-5 two limits (x<-5=1 and x<-5=3)"),
])
@pytest.mark.parametrize("levels", [[], ["--cpu-capability", "default"]])  # (levels: processes)
def test_two_limits_for_one_region_are_refused(limits, refusal, levels, capsys):
    argv = ["check", "--backend", "scipy:ndtr", "--function", "phi", "--dtype", "bfloat16",
            "--no-progress", *levels, *(a for limit in limits for a in ("--max-ulp", limit))]
    assert main(argv) == 2
    assert refusal in capsys.readouterr().err


@pytest.mark.parametrize("argv", [
    ["search", "--function", "erf", "--backend", "libm", "--seed", "1", "--seed", "2"],
    ["sweep", "--function", "gelu", "--backend", "scipy", "--workers", "1", "--workers", "2"],
    ["check", "--backend", "scipy", "--timeout", "10", "--timeout", "20"],
])
def test_a_single_valued_option_given_twice_with_two_values_is_refused(argv, capsys):
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    assert "is given twice" in capsys.readouterr().err

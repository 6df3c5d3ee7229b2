"""A user's implementation as a user runs it (issue: a gate a broken implementation cannot
pass): through the command line and the shipped pytest suite, each case of the issue."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from gelucheck.checks.drift import compare_outputs
from gelucheck.cli import main
from gelucheck.formats import FLOAT16

USER_MODULE = '''
import math

import mpmath
import numpy as np
from scipy import special

_CACHE = {}


def _rounded(v):
    """GELU(v) by mpmath at 40 digits, rounded to float16 through float64: a float16 tie
    lies no nearer than 2^-24 relative to an irrational GELU(v), so float64 (2^-53) cannot
    land on it - correctly rounded, written apart from gelucheck."""
    if v not in _CACHE:
        if math.isnan(v):
            _CACHE[v] = math.nan
        elif math.isinf(v):
            _CACHE[v] = v if v > 0 else -0.0
        else:
            with mpmath.workdps(40):
                _CACHE[v] = float(mpmath.mpf(v) * mpmath.ncdf(mpmath.mpf(v)))
    return _CACHE[v]


def correct(x):
    flat = x.astype(np.float64).reshape(-1)
    return np.array([_rounded(float(v)) for v in flat], dtype=x.dtype).reshape(x.shape)


def inf_above_1e4(x):
    w = x.astype(np.float64)
    y = (w * special.ndtr(w)).astype(x.dtype)
    y[w > 1e4] = np.inf
    return y


def flushed_tail(x):
    y = correct(x)
    y[x.astype(np.float64) < -3] = 0
    return y


def returns_a_list(x):
    return list(correct(x))


def raises_inside(x):
    return _helper(x)


def _helper(x):
    raise ValueError("my own bug")
'''


@pytest.fixture
def user(tmp_path, monkeypatch):
    (tmp_path / "mygelu.py").write_text(USER_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _suite(folder, *argv):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), *sys.path])}
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                           "--pyargs", "gelucheck.suite", "--gelucheck-function", "gelu",
                           "--gelucheck-dtype", "float16", "-m", "not consistency", "-rs",
                           *argv], cwd=folder, env=env, capture_output=True, text=True)


# 1. The shipped suite judges a user's implementation against a stated default.

@pytest.mark.slow
def test_the_shipped_suite_fails_an_inf_returning_gelu_and_names_the_input(user):
    done = _suite(user, "--gelucheck-impl", "mygelu:inf_above_1e4")
    assert done.returncode == 1, done.stdout[-3000:]
    assert "held to --gelucheck-max-ulp 0.5" in done.stdout
    assert "max ulp inf > 0.5" in done.stdout and "worst x = 10008.0" in done.stdout
    assert "gelucheck budgets --write FILE --impl MOD:FN --function gelu" in done.stdout


@pytest.mark.slow
@pytest.mark.parametrize("value", ["nan", "-1"])
def test_a_default_that_is_not_a_number_of_ulps_is_refused(user, value):
    """NaN compared false with every figure: the suite passed more than 0.5 let through."""
    done = _suite(user, "--gelucheck-impl", "mygelu:inf_above_1e4", "--gelucheck-max-ulp", value)
    assert done.returncode == 4  # pytest's usage error, before any test
    assert f"--gelucheck-max-ulp: '{value}': need a number of ulps, 0 or more" in done.stderr


@pytest.mark.slow
def test_the_shipped_suite_passes_a_correctly_rounded_gelu_without_skipping_it(user):
    done = _suite(user, "--gelucheck-impl", "mygelu:correct")
    assert done.returncode == 0, done.stdout[-3000:]
    passed = int(done.stdout.rsplit(" passed", 1)[0].split()[-1])
    assert passed >= 4  # ulp, specials, minimum, fingerprint: each judged, none skipped
    assert "no budget recorded" not in done.stdout
    skipped = [line for line in done.stdout.splitlines() if line.startswith("SKIPPED")]
    assert all("got empty parameter set" in line for line in skipped), skipped  # gelu_grad


def test_budgets_write_records_a_users_implementation_and_the_suite_knows_it(user):
    out = user / "mine.toml"
    assert main(["budgets", "--write", str(out), "--impl", "mygelu:inf_above_1e4",
                 "--function", "gelu"]) == 0
    text = out.read_text()
    assert '["user:mygelu:inf_above_1e4".gelu.float16]' in text
    from gelucheck import budgets
    from gelucheck.backends import implementations

    loaded = budgets.load(out)
    mine = implementations(None, ["mygelu:inf_above_1e4"], [budgets_fn()],
                           every_backend=False).implementations
    assert budgets.stale_entries(loaded, mine, []) == []
    other = implementations(None, ["mygelu:correct"], [budgets_fn()],
                            every_backend=False).implementations
    assert budgets.stale_entries(loaded, other, []) != []  # a user entry no impl here has


def budgets_fn():
    from gelucheck.functions import get_function

    return get_function("gelu")


# 2. A second --impl is measured, not dropped; the same one twice is refused.

@pytest.mark.slow  # two full measurements of users' callables: seconds
def test_every_impl_is_measured(user, tmp_path):
    out = tmp_path / "r.json"
    assert main(["check", "--impl", "mygelu:correct", "--impl", "mygelu:inf_above_1e4",
                 "--function", "gelu", "--dtype", "float16", "--no-progress",
                 "--json", str(out)]) == 0
    names = {r["implementation"] for r in json.loads(out.read_text())["results"]}
    assert names == {"mygelu:correct", "mygelu:inf_above_1e4"}


def test_an_impl_given_twice_is_refused(user, capsys):
    with pytest.raises(SystemExit) as exited:  # as the command line is read
        main(["check", "--impl", "mygelu:correct", "--impl", "mygelu:correct",
              "--function", "gelu"])
    assert exited.value.code == 2
    assert "--impl mygelu:correct is given twice" in capsys.readouterr().err


# 3. A user's kernel beside the frameworks': one table, drift and consistency.

@pytest.mark.slow  # a backend and a user's kernel measured, drift and consistency: seconds
def test_a_backend_and_a_users_implementation_in_one_table(user, tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(["check", "--backend", "scipy:x*ndtr", "--impl", "mygelu:correct",
                 "--function", "gelu", "--dtype", "float16", "--no-progress", "--details",
                 "--json", str(out)]) == 0
    ids = {(r["backend"], r["implementation"]) for r in json.loads(out.read_text())["results"]}
    assert ids == {("scipy", "x*ndtr"), ("user", "mygelu:correct")}
    table = capsys.readouterr().out.split("Max / mean ulp error, all inputs")[1].split("\n\n")[0]
    assert "scipy:x*ndtr" in table and "user:mygelu:correct" in table


@pytest.mark.slow  # seconds of workers or whole commands: CI runs it after the suite
def test_drift_takes_a_users_implementation(user, tmp_path):
    out = tmp_path / "d.json"
    assert main(["drift", "scipy:x*ndtr@gelu", "user:mygelu:correct@gelu", "--dtype",
                 "float16", "--json", str(out)]) == 0
    (r,) = json.loads(out.read_text())["results"]
    assert r["tanh_implementation"] == "user:mygelu:correct@gelu"
    assert main(["drift", "scipy:x*ndtr@gelu", "user:mygelu:correct"]) == 2  # no @function


@pytest.mark.slow  # seconds of workers or whole commands: CI runs it after the suite
def test_consistency_takes_a_users_implementation_and_says_when_nothing_differs(user,
                                                                                capsys):
    assert main(["consistency", "--impl", "mygelu:correct", "--function", "gelu", "--dtype",
                 "float16", "--workers", "1", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "consistency user:mygelu:correct gelu float16: every path gave the same bits: " \
           "63,488 inputs x" in out


# 4. --impl says what it computes.

def test_an_impl_without_its_function_is_refused_with_the_choices(user, capsys):
    assert main(["check", "--impl", "mygelu:correct"]) == 2
    err = capsys.readouterr().err
    assert "--impl: name the function your callable computes with --function" in err
    assert "phi, gelu, gelu_tanh" in err


def test_check_help_says_what_function_defaults_to(capsys):
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "with --impl, required: what your callable computes" in text


# 5. compare fails on what the new report lacks.

def _report(path, backend):
    path.write_text(json.dumps({"schema_version": 2, "results": [
        {"kind": "accuracy", "backend": backend, "implementation": "k", "function": "gelu",
         "reference": "gelu", "dtype": "float16", "device": "cpu", "how": "native",
         "description": "", "n_inputs": 1, "max_ulp": 0.5, "mean_ulp": 0.1, "n_infinite": 0,
         "not_correctly_rounded": 0, "worst_input": 1.0, "worst_input_hex": "0x3c00",
         "computed": 1.0, "exact": 1.0, "max_abs_error": 0.0, "max_abs_at": 1.0,
         "regions": []}]}))
    return str(path)


def test_compare_of_reports_that_share_nothing_fails(tmp_path, capsys):
    old, new = _report(tmp_path / "a.json", "one"), _report(tmp_path / "b.json", "two")
    assert main(["compare", old, new, "--fail-on-regression"]) == 1
    out = capsys.readouterr().out
    assert "MISSING one:k gelu float16" in out and "share no result" in out
    assert main(["compare", old, new, "--fail-on-regression", "--allow-missing"]) == 0
    assert main(["compare", old, old, "--fail-on-regression"]) == 0


# 7. Drift in a unit that means something where an output is zero.

def test_drift_is_in_ulps_of_the_correctly_rounded_value():
    """A flushed result (0) against the correctly rounded one: the difference is the whole
    value, 2^p ulps of it at most - where in ulps of the zero output (the subnormal quantum)
    1 against 0 in float32 read 1 / 2^-149 = 7e44."""
    x = np.array([-1.0], dtype=np.float16)
    first, second = np.array([-0.0], np.float16), np.array([-0.75], np.float16)
    f = compare_outputs(x, first, second, FLOAT16, reference=second)
    assert f.max_ulp == 0.75 / 2.0**-11 and f.max_abs == 0.75  # ulp(0.75) = 2^-11
    from gelucheck.formats import FLOAT32

    big = compare_outputs(np.array([1.0], np.float32), np.array([0.0], np.float32),
                          np.array([1.0], np.float32), FLOAT32,
                          reference=np.array([1.0], np.float32))
    assert big.max_ulp == 2.0**23  # 1 in ulps of 1, not 1 / 2^-149


@pytest.mark.slow  # seconds of workers or whole commands: CI runs it after the suite
def test_the_drift_table_says_its_unit(user, tmp_path, capsys):
    out = tmp_path / "d.json"
    assert main(["drift", "user:mygelu:correct@gelu", "user:mygelu:flushed_tail@gelu",
                 "--dtype", "float16", "--json", str(out)]) == 0
    assert "ulps of the correctly rounded value" in " ".join(capsys.readouterr().out.split())
    (r,) = json.loads(out.read_text())["results"]
    assert 2.0**10 <= r["max_ulp"] < 2.0**11  # a whole value: under 2^p ulps of itself


# 8. What is printed says what happened.

def test_a_list_is_named_as_a_list(user, capsys):
    assert main(["check", "--impl", "mygelu:returns_a_list", "--function", "gelu",
                 "--dtype", "float16", "--no-progress"]) == 2
    assert "returned a list, not an array of float16" in capsys.readouterr().out


def test_the_users_own_frames_come_first(user, capsys):
    assert main(["check", "--impl", "mygelu:raises_inside", "--function", "gelu",
                 "--dtype", "float16", "--dtype", "float32", "--no-progress"]) == 2
    out = capsys.readouterr().out
    head = out.split("Max / mean ulp error")[0]
    assert head.count("Traceback (the implementation's own frames)") == 1
    assert "mygelu.py" in head and "in _helper" in head and "ValueError: my own bug" in head
    assert "gelucheck/backends" not in head
    assert out.count("Traceback") == 1

"""`gelucheck sweep` and its runner (sweep/runner.py, checkpoints, workers, the gate and
the pytest items): resuming, bad input, the report, the profile."""
import json
import re

import pytest

from gelucheck.backends import find
from gelucheck.cli import main
from gelucheck.commands.sweep import _timing
from gelucheck.sweep import chunk, runner
from gelucheck.sweep.checkpoint import CheckpointError
from gelucheck.sweep.stats import merge_all


def _spec(impl="scipy:x*erf"):
    return [{"kind": "builtin", "impl": impl, "function": "gelu"}]


@pytest.mark.slow  # seconds of workers or whole commands: CI runs it after the suite
def test_interrupted_sweep_resumes_to_the_same_result(tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "TASK", 1 << 14)
    span = (0xBF000000, 0xBF000000 + (1 << 16))
    whole = runner.sweep(_spec(), "gelu", span, workers=1, progress=False)
    calls = {"n": 0}
    real = runner._run_job

    def dies_after_two(job):
        calls["n"] += 1
        if calls["n"] > 2:
            raise KeyboardInterrupt  # Ctrl-C, or a killed worker
        return real(job)

    monkeypatch.setattr(runner, "_run_job", dies_after_two)
    with pytest.raises(KeyboardInterrupt):
        runner.sweep(_spec(), "gelu", span, workers=1, checkpoint=tmp_path, progress=False)
    assert len(list(tmp_path.glob("task_*.json"))) == 2
    monkeypatch.setattr(runner, "_run_job", real)
    resumed = runner.sweep(_spec(), "gelu", span, workers=1, checkpoint=tmp_path,
                           progress=False)
    for a, b in zip(whole, resumed):
        assert a.figures == b.figures and a.histogram == b.histogram


def test_parallel_equals_serial(monkeypatch):
    monkeypatch.setattr(runner, "TASK", 1 << 15)
    span = (0x3F800000, 0x3F800000 + (1 << 17))
    serial = runner.sweep(_spec("scipy:x*ndtr"), "gelu", span, workers=1, progress=False)
    merged = merge_all([chunk.evaluate(find("scipy:x*ndtr", "gelu"), "gelu", a, b)
                        for a, b in reversed(runner.tasks(*span))])
    s = merged.implementations["scipy:x*ndtr/gelu"].whole
    assert s.max_ulp == serial[0].figures.max_ulp and s.n == serial[0].figures.n_inputs


def test_a_checkpoint_of_another_sweep_is_refused(tmp_path):
    runner.sweep(_spec(), "gelu", (0x3F800000, 0x3F801000), checkpoint=tmp_path, progress=False)
    with pytest.raises(CheckpointError, match=r"different sweep.*implementations"):
        runner.sweep(_spec("scipy:x*ndtr"), "gelu", (0x3F800000, 0x3F801000),
                     checkpoint=tmp_path, progress=False)
    with pytest.raises(CheckpointError, match="range"):
        runner.sweep(_spec(), "gelu", (0x3F800000, 0x3F802000), checkpoint=tmp_path,
                     progress=False)


@pytest.mark.parametrize("argv, words", [
    (["--dtype", "float16"], "gelucheck check --dtype float16"),
    (["--dtype", "float64"], "2^64 inputs cannot be swept"),
    (["--range", "3f800000"], "expected START:STOP"),
    (["--range", "0x40000000:0x3f800000"], "START < STOP"),
    (["--backend", "nope"], "valid choices"),
])
def test_bad_input(argv, words, capsys):
    assert main(["sweep", "--function", "gelu", "--backend", "scipy:x*ndtr", *argv]) == 2
    assert words in capsys.readouterr().err


def test_cli_sweep_writes_the_check_schema_plus_histogram(tmp_path, capsys):
    out = tmp_path / "s.json"
    assert main(["sweep", "--backend", "scipy:x*erf", "--impl", "sweep_impls:rounded_once",
                 "--function", "gelu", "--range", "0x3f800000:0x3f810000", "--workers", "1",
                 "--json", str(out), "--no-progress"]) == 0
    results = json.loads(out.read_text())["results"]
    assert [r["backend"] for r in results] == ["scipy", "user"]
    for r in results:
        for k in ("max_ulp", "mean_ulp", "worst_input", "worst_input_hex", "regions",
                  "histogram", "not_correctly_rounded", "n_slow_reference"):
            assert k in r
        assert r["n_inputs"] == 1 << 16
    assert re.search(r"\(\d[\d,.]* (M )?inputs/s computed now\)", capsys.readouterr().out)


def test_the_sweep_says_its_mean_is_of_the_finite_errors_where_some_are_infinite(capsys):
    """A GELU that is +inf from 2^127 (planted: the 16 encodings from 0x7f000000 here, where
    GELU(x) = x) and x itself below: the finite errors are 0, the 16 others infinite."""
    assert main(["sweep", "--impl", "sweep_impls:overflows_from_2p127", "--function", "gelu",
                 "--range", "0x7efffff0:0x7f000010", "--workers", "1", "--no-progress"]) == 0
    assert "max inf ulp at 1.7014118346046923e+38 (0x7f000000), mean 0 over the finite " \
           "errors (16 infinite)," in capsys.readouterr().out


def test_the_sweep_says_so_where_every_error_is_infinite(capsys):
    """No finite error to take a mean over: the mean is inf, and the line says that every
    error is infinite rather than that it is a mean over the finite ones."""
    assert main(["sweep", "--impl", "sweep_impls:infinite", "--function", "gelu",
                 "--range", "0x3f800000:0x3f800010", "--workers", "1", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "mean inf (every error infinite)," in out
    assert "over the finite errors" not in out


@pytest.mark.parametrize("wall_s, computed, said", [
    (5.0, 16, "5.0 s (3 inputs/s computed now)"),
    (0.0197, 16, "0.02 s (812 inputs/s computed now)"),
    (1.0, 999_999, "1.0 s (999,999 inputs/s computed now)"),
    (2.0586, 4_278_190_080, "2.1 s (2078.2 M inputs/s computed now)")])
def test_the_sweep_says_its_time_and_rate_with_their_digits(wall_s, computed, said):
    """Millions a second only where there are that many, and a time under a second in two
    significant digits: a range of 16 inputs had read "0.0 s (0.0 M inputs/s ...)"."""
    assert _timing(wall_s, computed) == said


@pytest.mark.slow
def test_exhaustive_items_under_xdist_merge_into_the_sweep_result(tmp_path, request):
    """pytest -n 2 -m exhaustive: chunks on two workers, merged by the controller, equal to
    ``gelucheck sweep`` over the same range (which crosses a task boundary: two items)."""
    import subprocess
    import sys

    span = "0x3fff0000:0x40010000"
    out = tmp_path / "merged.json"
    cmd = [sys.executable, "-m", "pytest", "-q", "-n", "2", "-m", "exhaustive",
           "-p", "no:cacheprovider", str(request.config.rootpath / "tests/test_exhaustive.py"),
           "--gelucheck-backend", "torch", "--gelucheck-function", "gelu",
           "--gelucheck-sweep-range", span, "--gelucheck-sweep-json", str(out)]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=request.config.rootpath)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "gelucheck exhaustive float32 sweep" in done.stdout
    from gelucheck.report import jsonio

    merged = {r.identity.implementation: r for r in jsonio.read(out)}
    direct = runner.sweep([{"kind": "builtin", "impl": f"torch:{n}", "function": "gelu"}
                           for n in ("F.gelu", "x*erf")], "gelu", runner.parse_range(span),
                          progress=False)
    for r in direct:
        m = merged[r.identity.implementation]
        assert m.figures.n_inputs == r.figures.n_inputs == 0x20000
        assert m.figures == r.figures and m.histogram == r.histogram


GATE_RANGE = "0x3f810000:0x3f820000"  # holds sweep_impls.PLANTED


def _gate_budgets(tmp_path):
    """A budgets file with the float32 entry the sweep figures are recorded in."""
    path = tmp_path / "b.toml"
    path.write_text('["user:sweep_impls:maybe_planted".gelu.float32]\nmax_ulp = 1.0\n')
    return path


def _gate(tmp_path, *extra):
    return main(["sweep", "--impl", "sweep_impls:maybe_planted", "--function", "gelu",
                 "--range", GATE_RANGE, "--workers", "1", "--no-progress", *extra])


def test_a_sweep_gate_fails_on_a_planted_regression(tmp_path, monkeypatch, capsys):
    budgets_file = _gate_budgets(tmp_path)
    monkeypatch.delenv("GELUCHECK_TEST_PLANT", raising=False)
    assert _gate(tmp_path, "--write-budgets", str(budgets_file)) == 0
    assert 'range = ["0x3f810000", "0x3f820000"]' in budgets_file.read_text()
    assert _gate(tmp_path, "--budgets", str(budgets_file)) == 0
    monkeypatch.setenv("GELUCHECK_TEST_PLANT", "1")
    capsys.readouterr()
    assert _gate(tmp_path, "--budgets", str(budgets_file)) == 1
    out = capsys.readouterr().out
    assert "worse than budget: correctly rounded" in out or "max ulp" in out
    assert "BUDGET sweep user:sweep_impls:maybe_planted gelu float32" in out


def _exhaustive_items(request, impl: str, span: str, *options: str, **env: str):
    """pytest -m exhaustive on tests/test_exhaustive.py for a user's implementation, in a
    process of its own (its workers import the implementation from tests/)."""
    import os
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "pytest", "-q", "-m", "exhaustive", "-p", "no:cacheprovider",
           str(request.config.rootpath / "tests/test_exhaustive.py"), "--gelucheck-impl", impl,
           "--gelucheck-function", "gelu", "--gelucheck-sweep-range", span, *options]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=request.config.rootpath,
                          env={**os.environ, "PYTHONPATH": str(request.config.rootpath /
                                                               "tests"), **env})


@pytest.mark.slow
def test_the_exhaustive_pytest_items_are_a_gate_too(tmp_path, monkeypatch, request):
    budgets_file = _gate_budgets(tmp_path)
    monkeypatch.delenv("GELUCHECK_TEST_PLANT", raising=False)
    assert _gate(tmp_path, "--write-budgets", str(budgets_file)) == 0
    gate = ("-n", "2", "--gelucheck-budgets", str(budgets_file))
    clean = _exhaustive_items(request, "sweep_impls:maybe_planted", GATE_RANGE, *gate)
    assert clean.returncode == 0, clean.stdout[-3000:]
    planted = _exhaustive_items(request, "sweep_impls:maybe_planted", GATE_RANGE, *gate,
                                GELUCHECK_TEST_PLANT="1")
    assert planted.returncode == 1, planted.stdout[-3000:]
    assert "FAILED sweep user:sweep_impls:maybe_planted gelu float32" in planted.stdout


def test_a_sweep_gate_holds_an_implementation_with_no_budget_to_the_default(tmp_path,
                                                                            monkeypatch, capsys):
    """Never passed unjudged: no entry at all, so its max ulp over the range is held to
    0.5 (the planted input errs by more than 1)."""
    import numpy as np

    from sweep_impls import PLANTED

    empty = tmp_path / "b.toml"
    empty.write_text("")
    monkeypatch.setenv("GELUCHECK_TEST_PLANT", "1")
    assert _gate(tmp_path, "--budgets", str(empty)) == 1
    out = capsys.readouterr().out
    assert ("BUDGET sweep user:sweep_impls:maybe_planted gelu float32: no budget recorded, so "
            "held to the default max ulp 0.5: ") in out
    assert f"{float(np.uint32(PLANTED).view(np.float32))!r}, {PLANTED:#010x}) > 0.5" in out


@pytest.mark.slow
def test_the_exhaustive_pytest_items_hold_an_implementation_with_no_budget_to_the_default(
        request):
    planted = _exhaustive_items(request, "sweep_impls:maybe_planted", GATE_RANGE,
                                GELUCHECK_TEST_PLANT="1")
    assert planted.returncode == 1, planted.stdout[-3000:]
    assert ("FAILED sweep user:sweep_impls:maybe_planted gelu float32: no budget recorded, so "
            "held to the default max ulp 0.5") in planted.stdout
    allowed = _exhaustive_items(request, "sweep_impls:maybe_planted", GATE_RANGE,
                                "--gelucheck-max-ulp", "2", GELUCHECK_TEST_PLANT="1")
    assert allowed.returncode == 0, allowed.stdout[-3000:]
    assert "held to the default max ulp 2: " in allowed.stdout


@pytest.mark.slow
def test_three_local_gateways_merge_to_the_single_process_sweep(tmp_path, request):
    """pytest-xdist over three gateways (--tx 3*popen, as over three machines with ssh=...):
    the merged report equals one gelucheck sweep of the same range (three tasks)."""
    span = "0x3ffff000:0x41000010"  # crosses two task boundaries: three items
    out = tmp_path / "merged.json"
    done = _exhaustive_items(request, "sweep_impls:rounded_once", span, "--dist", "load",
                             "--tx", "3*popen", "--gelucheck-sweep-json", str(out))
    assert done.returncode == 0, done.stdout[-3000:]
    assert "3 passed" in done.stdout
    from gelucheck.report import jsonio

    (merged,) = jsonio.read(out)
    (direct,) = runner.sweep([{"kind": "user", "impl": "sweep_impls:rounded_once",
                               "function": "gelu", "framework": "numpy", "device": "cpu"}],
                             "gelu", runner.parse_range(span), workers=1, progress=False)
    assert merged.figures == direct.figures and merged.histogram == direct.histogram


def test_profile_prints_where_the_time_went(capsys):
    assert main(["sweep", "--backend", "scipy:x*erf", "--backend", "scipy:x*ndtr",
                 "--function", "gelu", "--range", "0x3f800000:0x3f820000", "--workers", "1",
                 "--no-progress", "--profile"]) == 0
    out = capsys.readouterr().out
    assert "reference" in out and "(once for all 2)" in out
    assert "scipy:x*erf: implementation" in out and "scipy:x*ndtr: implementation" in out
    assert "x the implementations' own time" in out
    # the parts and what none of them covers add up to the total, the tasks' whole time
    import re

    figures = lambda pattern: [float(f) for f in re.findall(pattern, out)]
    parts = (figures(r"reference (\d+\.\d+)") + figures(r"implementation (\d+\.\d+)")
             + figures(r"comparison (\d+\.\d+)") + figures(r"input guard (\d+\.\d+)"))
    (other,), (total,) = figures(r"other \(merging blocks, bookkeeping\) (-?\d+\.\d+)"), \
        figures(r"total (\d+\.\d+)")
    assert other >= 0 and sum(parts) + other == pytest.approx(total, abs=0.0004)
    # one task, run here: the engine's cost is what the run took beyond the task
    assert re.search(r"engine: 1 tasks in this process, 1 worker\(s\): \d+\.\d{3} s per task",
                     out)


def test_the_compile_time_is_shown_apart_and_kept_in_the_json(tmp_path, capsys, sweep_path):
    """The compiled loops' compile (or cache load) happens before the sweep and is printed
    apart from the per-2^24 figures; without numba there is nothing to show."""
    path = tmp_path / "s.json"
    assert main(["sweep", "--backend", "scipy:x*ndtr", "--function", "gelu", "--range",
                 "0x3f800000:0x3f810000", "--workers", "1", "--no-progress", "--profile",
                 "--json", str(path)]) == 0
    out = capsys.readouterr().out
    compiled = sweep_path == "compiled"
    assert ("the compiled loops ready in" in out) == compiled
    (result,) = json.loads(path.read_text())["results"]
    assert ("compile_s" in result) == compiled
    assert not compiled or 0 < result["compile_s"] < 120
    assert result["engine"]["name"] == "here" and result["engine"]["tasks"] == 1
    assert result["engine"]["overhead_s"] >= 0
    from gelucheck.results import SweepResult

    assert SweepResult.from_json(result).engine == result["engine"]


def test_a_sweep_of_an_unknown_implementation_is_refused_before_the_loops_load(monkeypatch):
    """The implementations are resolved first: a name that is not there is refused, naming
    the valid ones, before the compiled loops load (or compile, the first time)."""
    from gelucheck.errors import UsageError

    loaded = []
    monkeypatch.setattr(runner, "warm", lambda *a: loaded.append(1))
    with pytest.raises(UsageError, match="numpy offers"):
        runner.sweep([{"kind": "builtin", "impl": "numpy:nothing", "function": "gelu"}],
                     "gelu", (0x3F800000, 0x3F810000), progress=False)
    assert not loaded


@pytest.mark.parametrize(("extra", "started"), [
    (["--workers", "2"], [["torch"]]),
    (["--workers", "1"], []),
    (["--workers", "2", "--range", "0x3f800000:0x3f810000"], []),  # one task: no worker
    (["--workers", "2", "--engine", "dask"], []),
], ids=["two-workers", "one-worker", "one-task", "dask"])
def test_the_command_starts_its_fork_server_before_it_checks_the_reference(
        extra, started, monkeypatch):
    """The fork server imports while the command checks the reference it will sweep against
    (erf's checks the C library: a large part of the command's start) - where workers will
    be forked from it."""
    from gelucheck.sweep import reference
    from sweep_support import fork_server_then

    calls = fork_server_then(monkeypatch, reference, "require")
    assert main(["sweep", "--backend", "torch:F.gelu", "--function", "gelu", "--no-progress",
                 *extra]) == 2
    assert calls == [*started, "require"]


@pytest.mark.slow
def test_workers_started_with_the_sweep_stop_when_it_is_refused_or_done():
    """The workers start with the tasks, forked from a server that imports the sweep's modules
    while this process resolves the implementations: a refused sweep starts none, a finished one
    stops them - no worker is left behind either way."""
    import multiprocessing

    from gelucheck.errors import UsageError

    before = set(multiprocessing.active_children())
    two_tasks = (0x3F000000, 0x3F000000 + 2 * runner.TASK)  # one task would spawn no worker
    with pytest.raises(UsageError, match="numpy offers"):
        runner.sweep([{"kind": "builtin", "impl": "numpy:nothing", "function": "gelu"}],
                     "gelu", two_tasks, workers=2, progress=False)
    assert set(multiprocessing.active_children()) <= before
    spec = [{"kind": "builtin", "impl": "scipy:ndtr", "function": "phi"}]
    out = runner.sweep(spec, "phi", two_tasks, workers=2, progress=False)
    alone = runner.sweep(spec, "phi", two_tasks, workers=1, progress=False)
    assert set(multiprocessing.active_children()) <= before
    assert out[0].figures.max_ulp == alone[0].figures.max_ulp
    assert out[0].figures.n_inputs == alone[0].figures.n_inputs == 2 * runner.TASK


@pytest.mark.slow  # seconds of workers or whole commands: CI runs it after the suite
@pytest.mark.parametrize("through", ["environment", "working directory"])
def test_workers_take_their_sweeps_environment_and_directory(through, monkeypatch, request,
                                                             tmp_path):
    """Workers forked from the fork server, which a first sweep started with its own
    environment and working directory: a later sweep's workers see that sweep's (an
    implementation plants its error only where $GELUCHECK_TEST_PLANT is set, or where the
    working directory holds PLANT), as spawned ones would."""
    monkeypatch.setattr(runner, "TASK", 1 << 14)  # two tasks: two workers
    monkeypatch.syspath_prepend(str(request.config.rootpath / "tests"))
    from sweep_impls import PLANTED
    monkeypatch.delenv("GELUCHECK_TEST_PLANT", raising=False)
    monkeypatch.chdir(tmp_path)
    impl = "maybe_planted" if through == "environment" else "planted_here"
    span = (0x3F810000, 0x3F818000)  # holds sweep_impls.PLANTED, 0x3f812345
    spec = [{"kind": "user", "impl": f"sweep_impls:{impl}", "function": "gelu",
             "framework": "numpy", "device": "cpu"}]
    clean = runner.sweep(spec, "gelu", span, workers=2, progress=False)
    if through == "environment":
        monkeypatch.setenv("GELUCHECK_TEST_PLANT", "1")
    else:
        (tmp_path / "marked").mkdir()
        (tmp_path / "marked" / "PLANT").touch()
        monkeypatch.chdir(tmp_path / "marked")
    planted = runner.sweep(spec, "gelu", span, workers=2, progress=False)
    assert clean[0].figures.not_correctly_rounded == 0
    assert planted[0].figures.not_correctly_rounded == 1
    assert planted[0].figures.worst_input_hex == f"0x{PLANTED:08x}"


def test_a_sweep_run_in_this_process_leaves_torchs_threads_as_they_were():
    """Tasks run here (one worker) take torch to one thread, as in a worker; a library's
    caller - the pytest plugin, a user's test - gets its thread count back afterwards."""
    torch = pytest.importorskip("torch", reason="torch not installed: no threads to keep")
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        runner.sweep([{"kind": "builtin", "impl": "scipy:ndtr", "function": "phi"}], "phi",
                     (0x3F800000, 0x3F810000), workers=1, progress=False)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)

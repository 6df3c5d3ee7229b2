"""The faults a user will meet, each reproduced through the command line: never a wrong figure
with exit 0, never a hang, never a traceback for bad input or damaged data."""
import json
import math
import re
import shutil
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from gelucheck.backends import find
from gelucheck.cli import main
from gelucheck.formats import BFLOAT16
from gelucheck.reference import store
from gelucheck.report import jsonio

HERE = Path(__file__).parent



def _check_json(tmp_path, *argv) -> tuple[int, list[dict]]:
    out = tmp_path / "r.json"
    status = main(["check", *argv, "--json", str(out), "--no-progress"])
    return status, json.loads(out.read_text())["results"] if out.exists() else []


# 1. "Not correctly rounded" is decided by the rounded value, not by an error of 0.5.

def _gelu_tiny_correctly_rounded(x: float) -> Fraction:
    """GELU(x) = x/2 + x²/√(2π) + O(x⁴) rounded to bfloat16's subnormal quantum 2^-133, for
    |x| < 2^-125 (where GELU(x) is subnormal): by hand, in exact rationals. x/2 is a multiple
    of 2^-134, so it is either on the quantum grid or exactly halfway; the x² term (positive,
    and 2^-120 of the quantum or less, far above the O(x⁴) term) breaks a tie upwards."""
    q = Fraction(2) ** -133
    half = Fraction(x) / 2 / q  # in quanta: an integer or an integer + 1/2
    if half.denominator == 1:
        return half * q
    return (half + Fraction(1, 2)) * q  # the tie, rounded up by the x² term


def test_results_a_hair_from_a_tie_count_as_not_correctly_rounded(tmp_path, capsys):
    """SciPy's x*ndtr in bfloat16 (float64 inside) rounds the subnormal ties x/2 to even;
    the correctly rounded GELU rounds them up. Derived by hand: one in two odd quanta."""
    tiny = np.array([v for v in BFLOAT16.all_finite() if 0 < abs(float(v)) < 2.0**-125],
                    dtype=BFLOAT16.dtype)
    got = find("scipy:x*ndtr", "gelu")[0](tiny).astype(np.float64)
    expected = [_gelu_tiny_correctly_rounded(float(v)) for v in tiny]
    misses = sum(Fraction(float(g)) != e for g, e in zip(got, expected))
    assert misses == 128  # 2 signs x 128 odd quanta below 2^-125, half of them to even

    status, results = _check_json(tmp_path, "--backend", "scipy", "--dtype", "bfloat16",
                                  "--function", "gelu")
    assert status == 0
    ndtr = next(r for r in results if r["implementation"] == "x*ndtr")
    assert ndtr["max_ulp"] == 0.5 and ndtr["not_correctly_rounded"] == misses
    assert "0.5+" in capsys.readouterr().out  # a 0.5 that hides misses is never shown as 0.5


# 2. A rewritten reference file is refused, named; verify checks every manifest field.

@pytest.fixture
def reference_copy(tmp_path, monkeypatch):
    copy = tmp_path / "reference"
    shutil.copytree(store.default_directory(), copy)
    monkeypatch.setenv("GELUCHECK_REFERENCE", str(copy))
    return copy


def test_a_rewritten_reference_file_is_refused(reference_copy, tmp_path, capsys):
    table = store.load("float16", "gelu", reference_copy)
    table.arrays["gelu.rounded"][50_000] ^= np.uint16(1)
    store.write_table(table, reference_copy, {})  # valid zips; the manifest is untouched
    status, results = _check_json(tmp_path, "--backend", "scipy", "--dtype", "float16")
    err = capsys.readouterr().err
    assert status == 2 and not results
    assert "float16/gelu.npz" in err and "does not match its manifest" in err


@pytest.mark.parametrize("field, value, words", [
    ("entries", 63487, "entries"),
    ("bytes", 1, "bytes"),
    ("block", 1024, "block size"),
])
def test_verify_checks_every_manifest_field(reference_copy, capsys, field, value, words):
    manifest = store.read_manifest(reference_copy)
    manifest["files"]["float16/gelu_grad.npz"][field] = value
    store.write_manifest(manifest, reference_copy)
    status = main(["reference", "verify", "--dtype", "float16", "--no-arb",
                   "--directory", str(reference_copy)])
    out = capsys.readouterr().out
    assert status == 1 and "float16/gelu_grad.npz" in out and words in out


@pytest.mark.slow  # verify re-derives values with mpmath: seconds
def test_verify_checks_the_recorded_working_precision(reference_copy, capsys):
    manifest = store.read_manifest(reference_copy)
    manifest["working_precision_bits"]["start"] = 53
    store.write_manifest(manifest, reference_copy)
    assert main(["reference", "verify", "--dtype", "float16", "--no-arb",
                 "--directory", str(reference_copy)]) == 1
    assert "working_precision_bits" in capsys.readouterr().out


@pytest.mark.parametrize("damage", ["missing", "truncated"])
def test_a_missing_or_damaged_reference_is_a_clear_error(reference_copy, capsys, damage):
    path = reference_copy / "bfloat16" / "inputs.gelu.npz"
    if damage == "missing":
        path.unlink()
    else:
        path.write_bytes(path.read_bytes()[:1000])
    assert main(["report", "--backend", "numpy", "--dtype", "bfloat16", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "bfloat16/inputs.gelu.npz" in err and "Traceback" not in err


# 3. An implementation that changes its input cannot corrupt what is measured after it.

@pytest.mark.parametrize("spec, framework", [("user_impls:gelu_in_place_numpy", "numpy"),
                                             ("user_impls:gelu_in_place_torch", "torch")])
def test_an_implementation_that_mutates_its_input_is_its_own_error(tmp_path, capsys, spec,
                                                                   framework):
    if framework == "torch":
        pytest.importorskip("torch", reason="torch is not installed")
    status, results = _check_json(tmp_path, "--impl", spec, "--framework", framework,
                                  "--function", "gelu", "--function", "phi",
                                  "--dtype", "float16")
    assert status == 2
    assert all(r["error"] and "modified its input in place" in r["error"] for r in results)
    assert "ERROR user:" in capsys.readouterr().out
    # the stored inputs are intact: a correct implementation measured afterwards is exact
    status, results = _check_json(tmp_path, "--backend", "scipy", "--dtype", "float16",
                                  "--function", "phi")
    assert all(r["max_ulp"] <= 0.5 for r in results)


# 4. An all-NaN GELU is reported and the run goes on.

def test_an_all_nan_gelu_is_reported_not_a_crash(tmp_path, capsys):
    status, results = _check_json(tmp_path, "--impl", "user_impls:all_nan", "--function",
                                  "gelu", "--dtype", "float16", "--dtype", "float32")
    assert status == 0 and len(results) == 2
    for r in results:
        assert math.isinf(float(r["max_ulp"])) and r["all_nan"]
        assert "NaN at every input around x*" in r["minimum"]["error"]
    assert capsys.readouterr().out.count("ALL NaN user:user_impls:all_nan") == 2


# 5. A dead sweep worker ends the run with a clear error; the finished tasks stay and resume.

def _sweep_argv(tmp_path, impl="sweep_impls:dies_once", workers="2"):
    return ["sweep", "--impl", impl, "--function", "gelu", "--range", "0x3f800000:0x3f818000",
            "--workers", workers, "--checkpoint", str(tmp_path / "ck"), "--no-progress",
            "--json", str(tmp_path / "s.json")]


@pytest.mark.slow
def test_a_killed_sweep_worker_ends_the_run_and_a_rerun_resumes(tmp_path, monkeypatch, capsys):
    from gelucheck.sweep import runner

    monkeypatch.setattr(runner, "TASK", 1 << 14)  # six tasks; 0x3f812345 lies in the fifth
    marker = tmp_path / "die"
    marker.touch()
    monkeypatch.setenv("GELUCHECK_TEST_DIE_ONCE", str(marker))
    monkeypatch.setenv("PYTHONPATH", str(HERE))  # for the spawned workers
    assert main(_sweep_argv(tmp_path)) == 2
    assert "worker process died" in capsys.readouterr().err
    assert not marker.exists()
    kept = len(list((tmp_path / "ck").glob("task_*.json")))
    assert kept < 6
    assert main(_sweep_argv(tmp_path)) == 0
    (result,) = json.loads((tmp_path / "s.json").read_text())["results"]
    assert result["n_inputs"] == 0x18000 and result["n_evaluated"] == 0x18000 - kept * (1 << 14)


@pytest.mark.slow
def test_one_ctrl_c_stops_a_parallel_sweep(tmp_path):
    """SIGINT to the process group, as a terminal's Ctrl-C sends it: the sweep ends at once."""
    import os
    import signal
    import subprocess
    import sys
    import time

    cmd = [sys.executable, "-m", "gelucheck.cli", "sweep", "--backend", "scipy:x*ndtr",
           "--function", "gelu", "--workers", "2", "--no-progress"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    time.sleep(6)  # workers started and busy with the first tasks of 2^32 inputs
    assert proc.poll() is None
    os.killpg(proc.pid, signal.SIGINT)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail("the sweep did not stop within 20 s of one Ctrl-C")
    assert proc.returncode != 0


# 6. Checkpoints are checked, never trusted.

def _checkpointed(tmp_path, monkeypatch):
    from gelucheck.sweep import runner

    monkeypatch.setattr(runner, "TASK", 1 << 14)
    assert main(_sweep_argv(tmp_path, "sweep_impls:rounded_once", "1")) == 0
    return sorted((tmp_path / "ck").glob("task_*.json"))


@pytest.mark.slow  # seconds of workers or whole commands: CI runs it after the suite
def test_a_task_file_copied_over_another_is_refused(tmp_path, monkeypatch, capsys):
    files = _checkpointed(tmp_path, monkeypatch)
    files[1].write_bytes(files[0].read_bytes())
    assert main(_sweep_argv(tmp_path, "sweep_impls:rounded_once", "1")) == 2
    err = capsys.readouterr().err
    assert files[1].name in err and "copied over another task" in err


def test_an_edited_task_file_is_refused(tmp_path, monkeypatch, capsys):
    files = _checkpointed(tmp_path, monkeypatch)
    saved = json.loads(files[2].read_text())
    saved["result"]["implementations"]["user:sweep_impls:rounded_once/gelu"]["whole"][
        "max_ulp"] = 0.1
    files[2].write_text(json.dumps(saved))
    assert main(_sweep_argv(tmp_path, "sweep_impls:rounded_once", "1")) == 2
    assert "checksum does not match" in capsys.readouterr().err


def test_a_truncated_task_file_is_named(tmp_path, monkeypatch, capsys):
    files = _checkpointed(tmp_path, monkeypatch)
    files[3].write_text(files[3].read_text()[:50])
    assert main(_sweep_argv(tmp_path, "sweep_impls:rounded_once", "1")) == 2
    err = capsys.readouterr().err
    assert files[3].name in err and "truncated" in err


@pytest.mark.parametrize("result", [[1, 2], "stop", None], ids=["list", "text", "null"])
def test_a_task_file_whose_result_is_no_object_is_named(tmp_path, monkeypatch, capsys, result):
    """Checksummed, of this sweep, yet not a task's statistics (written by hand or by a
    buggy tool): refused with the file named, never an AttributeError."""
    from gelucheck.sweep.checkpoint import _digest

    files = _checkpointed(tmp_path, monkeypatch)
    saved = json.loads(files[1].read_text())
    saved["result"] = result
    saved["checksum"] = _digest([saved["sweep"], result])
    files[1].write_text(json.dumps(saved))
    assert main(_sweep_argv(tmp_path, "sweep_impls:rounded_once", "1")) == 2
    err = capsys.readouterr().err
    assert files[1].name in err and "no task's statistics" in err


def test_a_task_file_of_the_right_task_but_no_statistics_is_named(tmp_path, monkeypatch,
                                                                  capsys):
    from gelucheck.sweep.checkpoint import _digest

    files = _checkpointed(tmp_path, monkeypatch)
    saved = json.loads(files[1].read_text())
    del saved["result"]["implementations"]["user:sweep_impls:rounded_once/gelu"]["whole"]
    saved["checksum"] = _digest([saved["sweep"], saved["result"]])
    files[1].write_text(json.dumps(saved))
    assert main(_sweep_argv(tmp_path, "sweep_impls:rounded_once", "1")) == 2
    err = capsys.readouterr().err
    assert files[1].name in err and "does not hold a task's statistics" in err


def test_resuming_after_the_code_changed_is_refused(tmp_path, monkeypatch, capsys):
    """The user's implementation is identified by its source: the same name with other code
    is another sweep, and its checkpoints are not mixed in."""
    _checkpointed(tmp_path, monkeypatch)
    module = tmp_path / "mod"
    module.mkdir()
    (module / "sweep_impls.py").write_text((HERE / "sweep_impls.py").read_text().replace(
        "return narrow(x64 * special.ndtr(x64), \"float32\")",
        "return narrow(x64 * special.ndtr(x64) * (1 + 2.0**-40), \"float32\")"))
    monkeypatch.syspath_prepend(str(module))
    import sys

    monkeypatch.delitem(sys.modules, "sweep_impls", raising=False)
    assert main(_sweep_argv(tmp_path, "sweep_impls:rounded_once", "1")) == 2
    err = capsys.readouterr().err
    assert "different sweep" in err and "versions" in err


# 7. Smaller faults: each a clear error before any work.

@pytest.mark.parametrize("argv, words", [
    (["sweep", "--function", "gelu", "--backend", "scipy", "--range", ""], "expected START:STOP"),
    (["sweep", "--function", "gelu", "--backend", "scipy", "--range",
      "0xff800000:0x100000000"], "only inf and NaN"),
    (["sweep", "--function", "gelu", "--backend", "numpy"], "numpy has no gelu; it offers"),
    (["sweep", "--function", "gelu", "--backend", "nosuch"],
     "unknown backend 'nosuch'; valid choices: numpy, scipy"),
    (["sweep", "--function", "gelu", "--backend", "scipy:nope", "--workers", "2"],
     "unknown implementation 'scipy:nope'; scipy offers: erf, erfc, ndtr"),
    (["drift", "scipy:x*ndtr@gelu", "scipy:x*ndtr@gelu_tanh"],
     "scipy:x*ndtr does not compute gelu_tanh; it computes: gelu"),
    (["check", "--impl", "user_impls:torch_gelu", "--function", "gelu", "--device", "cuda"],
     "needs --framework torch"),
])
def test_bad_values_are_refused_at_once(argv, words, capsys):
    assert main(argv) == 2
    assert words in capsys.readouterr().err


@pytest.mark.parametrize("workers", ["0", "-3", "two"])
def test_a_worker_count_below_one_is_refused(workers, capsys):
    with pytest.raises(SystemExit):
        main(["sweep", "--function", "gelu", "--backend", "scipy", "--workers", workers])
    assert "need a whole number of at least 1" in capsys.readouterr().err


def test_a_nan_budget_is_refused(tmp_path, capsys):
    (tmp_path / "b.toml").write_text('["scipy:ndtr".phi.float16]\nmax_ulp = nan\n')
    assert main(["check", "--backend", "scipy", "--dtype", "float16", "--function", "phi",
                 "--budgets", str(tmp_path / "b.toml"), "--no-progress"]) == 2
    assert "NaN not" in capsys.readouterr().err


def test_a_budget_for_an_implementation_that_does_not_exist_is_named(tmp_path, capsys):
    (tmp_path / "b.toml").write_text('["scipy:ndtr".phi.float16]\nmax_ulp = 0.5\n'
                                     'not_correctly_rounded = 0\n'
                                     '["scipy:ndtri".phi.float16]\nmax_ulp = 0.5\n')
    assert main(["check", "--backend", "scipy", "--dtype", "float16", "--function", "phi",
                 "--budgets", str(tmp_path / "b.toml"), "--no-progress"]) in (0, 1)
    err = capsys.readouterr().err
    assert '[scipy:ndtri.phi.float16] names no implementation here' in err
    assert "scipy:ndtr.phi" not in err


def test_a_missing_budgets_file_is_named(tmp_path, capsys):
    assert main(["check", "--backend", "scipy", "--dtype", "float16", "--budgets",
                 str(tmp_path / "nope.toml"), "--no-progress"]) == 2
    assert "nope.toml" in capsys.readouterr().err


# 8. A user implementation that never returns, or dies, is its own error; the run goes on.

@pytest.mark.slow  # a child process each, waited on
@pytest.mark.parametrize("spec, timeout, words", [
    ("user_impls:never_returns", "2", "did not return within 2 s"),
    # the others die at once: a long limit, so that a slow start on a loaded machine (a
    # spawned child imports numpy and the backends) is not mistaken for a hang
    ("user_impls:aborts", "60", "killed by SIGABRT; its stderr ended: about to abort"),
    ("user_impls:segfaults", "60", "killed by SIGSEGV"),
])
def test_a_hanging_or_crashing_implementation_is_its_own_error(tmp_path, capsys, spec,
                                                               timeout, words):
    status, results = _check_json(tmp_path, "--impl", spec, "--function", "gelu", "--timeout",
                                  timeout, "--dtype", "float16", "--dtype", "bfloat16")
    assert status == 2 and len(results) == 2
    assert all(words in r["error"] for r in results), [r["error"] for r in results]


@pytest.mark.slow  # a measurement in a process of its own: seconds
def test_an_isolated_implementation_measures_the_same(tmp_path):
    status, direct = _check_json(tmp_path, "--impl", "user_impls:gelu_float64_then_round",
                                 "--function", "gelu", "--dtype", "bfloat16")
    status, isolated = _check_json(tmp_path, "--impl", "user_impls:gelu_float64_then_round",
                                   "--function", "gelu", "--dtype", "bfloat16", "--isolate")
    assert status == 0 and direct[0]["max_ulp"] == isolated[0]["max_ulp"] <= 0.5


# The CI gates of gelucheck check.

def test_max_ulp_gates_overall_and_by_region(tmp_path, capsys):
    assert main(["check", "--backend", "scipy", "--dtype", "float16", "--max-ulp", "0.5",
                 "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["check", "--impl", "sweep_impls:planted", "--function", "gelu",
                 "--dtype", "float32", "--max-ulp", "0.5", "--no-progress"]) == 1
    out = capsys.readouterr().out
    # within half an ulp, yet not correctly rounded (the subnormal ties of x·ndtr in float64)
    assert re.search(r"FAIL user:sweep_impls:planted gelu float32: [1-9][\d,]* results not "
                     r"correctly rounded \(a tie rounded the wrong way", out)
    pytest.importorskip("torch", reason="torch is not installed")
    # correctly rounded but one ulp up in -5 <= x < -1: from 1/2 to 3/2 ulps there
    torch_gelu = ["check", "--impl", "user_impls:torch_gelu_one_ulp_up_in_band",
                  "--framework", "torch", "--function", "gelu", "--dtype", "float16",
                  "--no-progress"]
    assert main([*torch_gelu, "--max-ulp", "x<-5=0.5", "--max-ulp=-5<=x<-1=1.5"]) == 0
    assert main([*torch_gelu, "--max-ulp=-5<=x<-1=0.5"]) == 1
    assert "in -5<=x<-1" in capsys.readouterr().out


def test_specials_gate_on_request(capsys):
    argv = ["check", "--backend", "scipy", "--function", "gelu", "--dtype", "float16",
            "--max-ulp", "0.5", "--no-progress"]
    assert main(argv) == 0
    assert main([*argv, "--specials"]) == 1  # x·ndtr(x) at -inf is NaN; the limit is -0
    assert "special input -inf: expected -0.0, computed nan" in capsys.readouterr().out


@pytest.mark.parametrize("limit", ["-1", "abc", "x<-7=3"])
def test_a_bad_limit_is_refused(limit, capsys):
    with pytest.raises(SystemExit):
        main(["check", "--backend", "scipy", f"--max-ulp={limit}"])
    assert "--max-ulp" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["check", "sweep"])
def test_an_unavailable_backend_asked_for_by_name_is_an_error(command, capsys):
    torch = pytest.importorskip("torch", reason="torch is not installed")
    if torch.cuda.is_available():
        pytest.skip("CUDA is present: torch-cuda is available")
    extra = ["--function", "gelu", "--workers", "2"] if command == "sweep" else []
    assert main([command, "--backend", "torch-cuda", "--no-progress", *extra]) == 2
    assert "backend torch-cuda is unavailable" in capsys.readouterr().err


def test_output_paths_are_checked_before_any_work(tmp_path, capsys):
    blocked = tmp_path / "ro"
    blocked.mkdir()
    blocked.chmod(0o500)
    import os

    if os.access(blocked, os.W_OK):  # root ignores permission bits: use a file as the folder
        (tmp_path / "file").write_text("")
        blocked = tmp_path / "file"
    assert main(["report", "--backend", "numpy", "--json", str(blocked / "sub" / "r.json"),
                 "--no-progress"]) == 2
    assert "--json" in capsys.readouterr().err
    assert main(["report", "--backend", "numpy", "--markdown", str(tmp_path),
                 "--no-progress"]) == 2
    assert "is a folder" in capsys.readouterr().err
    made = tmp_path / "new" / "deeper" / "r.json"
    assert main(["check", "--backend", "numpy", "--dtype", "float16", "--json", str(made),
                 "--no-progress"]) == 0
    assert made.exists()


@pytest.mark.parametrize("argv, words", [
    (["check", "--backend", "numpy", "--dtype", "float16", "--json", "{out}", "--markdown",
      "{out}"], "--markdown {out}: --json names that file too"),
    (["drift", "numpy:tanh", "numpy:tanh", "--json", "{out}", "--markdown", "{out}"],
     "--markdown {out}: --json names that file too"),
    (["sweep", "--backend", "scipy:ndtr", "--function", "phi", "--range", "0:16", "--json",
      "{out}", "--write-budgets", "{out}"], "--write-budgets {out}: --json names that file too"),
    (["html", "{report}", "--output", "{report}"],
     "--output {report}: the command reads that file (REPORT.json); writing it would destroy"),
])
def test_two_outputs_in_one_file_or_an_output_over_an_input_are_refused(tmp_path, capsys, argv,
                                                                        words):
    """Only the file written last would be left (a JSON report lost under its Markdown), or
    an input destroyed: refused before any work, the file kept as it was."""
    report = tmp_path / "report.json"
    report.write_text(jsonio.report_text([]))
    names = {"out": str(tmp_path / "out"), "report": str(report)}
    assert main([a.format(**names) for a in argv]) == 2
    assert words.format(**names) in capsys.readouterr().err
    assert not (tmp_path / "out").exists() and jsonio.read(report) == []


@pytest.mark.slow  # a process of its own
def test_version_and_python_dash_m():
    import subprocess
    import sys

    from gelucheck import __version__

    done = subprocess.run([sys.executable, "-m", "gelucheck", "--version"], capture_output=True,
                          text=True)
    assert done.returncode == 0 and done.stdout.strip() == f"gelucheck {__version__}"
    assert __version__ != "0+unknown"


@pytest.mark.slow
@pytest.mark.parametrize("inductor_first", [False, True],
                         ids=["fresh", "inductor-already-imported"])
def test_compiled_kernels_are_cached_per_cpu_capability(tmp_path, inductor_first):
    """A kernel compiled at the default capability must not be loaded under another one
    (torch 2.13 gave NaN from a shared cache: docs/repro/). gelucheck keys the cache - also
    where something imported Inductor first, which writes its default folder into the
    environment (importing timm does: torch 2.14.1 then aborted on a corrupted heap)."""
    torch = pytest.importorskip("torch", reason="torch is not installed")
    if torch.backends.cpu.get_cpu_capability() == "DEFAULT":
        pytest.skip("no vector capability to switch from on this machine")
    import os
    import subprocess
    import sys

    first = ("from torch._inductor.runtime.cache_dir_utils import cache_dir\n"
             "cache_dir()\n" if inductor_first else "")
    code = ("import torch, torch.nn.functional as F\n" + first +
            "from gelucheck.backends.tensors import torch_compile\n"
            "f = torch_compile(lambda t: F.gelu(t), dynamic=True)\n"
            "x = torch.linspace(0.1, 3, 1000)\n"
            "print((f(x) - F.gelu(x)).abs().max().item())\n"
            "import os; print(os.environ['TORCHINDUCTOR_CACHE_DIR'])\n")
    from gelucheck import tiers

    # the CPU's own kernels first (the run's kernel tier caps this process's environment)
    env = {k: v for k, v in tiers.environment("native").items()
           if k != "TORCHINDUCTOR_CACHE_DIR"}
    env["TMPDIR"] = str(tmp_path)  # a fresh cache root, shared by both runs
    folders = set()
    for level in ("default", "avx2"):
        run_env = dict(env) if level == "default" else {**env, "ATEN_CPU_CAPABILITY": level}
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              env=run_env, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        difference, folder = done.stdout.strip().splitlines()[-2:]
        assert float(difference) < 1e-5, (level, done.stdout)
        assert os.path.basename(folder).startswith("gelucheck-inductor-"), folder
        folders.add(folder)
    assert len(folders) == 2, folders  # one cache per capability


def test_inductor_s_cache_is_keyed_inside_the_folder_already_named():
    from gelucheck.backends.tensors import inductor_cache_dir

    key = "gelucheck-inductor-2.14.1-AVX512"
    assert inductor_cache_dir(None, "/tmp", "2.14.1", "AVX512") == f"/tmp/{key}"
    assert inductor_cache_dir("/home/u/cache", "/tmp", "2.14.1", "AVX512") == \
        f"/home/u/cache/{key}"
    assert inductor_cache_dir(f"/tmp/{key}/", "/tmp", "2.14.1", "AVX512") == f"/tmp/{key}"
    assert inductor_cache_dir(f"/tmp/{key}", "/tmp", "2.14.1", "AVX2") == \
        "/tmp/gelucheck-inductor-2.14.1-AVX2"

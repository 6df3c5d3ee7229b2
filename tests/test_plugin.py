"""The pytest plugin: selection by option or environment, readable ids, skips with reasons."""
import contextlib

import pytest

# loaded before any test here: the pytester fixture restores sys.modules after each test,
# and a torch imported inside one would be dropped - importing it again in the same process
# crashed the worker (a segmentation fault in torch's C extension)
with contextlib.suppress(ImportError):
    import torch  # noqa: F401

# each runs pytest in a process of its own, which loads every backend; the default run
# exercises the plugin through the whole accuracy matrix (tests/test_accuracy.py)
pytestmark = pytest.mark.slow

TEST_FILE = """
def test_case(accuracy_case):
    pass

def test_drift(drift_case):
    pass
"""


def test_environment_selects_backend_and_dtype(pytester, monkeypatch):
    monkeypatch.setenv("GELUCHECK_BACKEND", "scipy")
    monkeypatch.setenv("GELUCHECK_DTYPE", "float16,bfloat16")
    pytester.makepyfile(TEST_FILE)
    result = pytester.runpytest_subprocess("--collect-only", "-q")
    out = result.stdout.str()
    assert "test_case[scipy:ndtr-phi-float16]" in out
    assert "test_case[scipy:x*erfc-gelu-bfloat16]" in out
    assert "float32" not in out and "torch" not in out


def test_option_selects_function(pytester):
    pytester.makepyfile(TEST_FILE)
    result = pytester.runpytest_subprocess("--collect-only", "-q", "--gelucheck-backend", "numpy",
                                           "--gelucheck-function", "gelu_tanh",
                                           "--gelucheck-dtype", "float32")
    out = result.stdout.str()
    assert "test_case[numpy:tanh-gelu_tanh-float32]" in out
    assert "test_drift[reference:gelu-vs-numpy:tanh-float32]" in out


def test_unknown_choice_is_a_usage_error(pytester):
    pytester.makepyfile(TEST_FILE)
    result = pytester.runpytest_subprocess("--gelucheck-backend", "caffe")
    assert result.ret != 0
    assert "valid choices: numpy, scipy" in result.stderr.str()


def test_a_choice_given_twice_is_a_usage_error(pytester, monkeypatch):
    """Each of its tests would run twice: refused, from the option or the environment."""
    pytester.makepyfile(TEST_FILE)
    result = pytester.runpytest_subprocess("--gelucheck-dtype", "float16",
                                           "--gelucheck-dtype", "float16")
    assert result.ret != 0
    assert "--gelucheck-dtype: dtype ['float16'] given twice" in result.stderr.str()
    monkeypatch.setenv("GELUCHECK_DTYPE", "float16,bfloat16,float16")
    result = pytester.runpytest_subprocess()
    assert result.ret != 0
    assert "$GELUCHECK_DTYPE: dtype ['float16'] given twice" in result.stdout.str()


def test_a_project_with_its_own_backend_option_coexists(pytester):
    """A project whose conftest defines --backend (as many do) starts and runs its tests."""
    pytester.makeconftest("""
def pytest_addoption(parser):
    parser.addoption("--backend", default="mine")
    parser.addoption("--dtype", default="x")
""")
    pytester.makepyfile("def test_own(request):\n"
                        "    assert request.config.getoption('--backend') == 'cpu'\n")
    result = pytester.runpytest_subprocess("--backend", "cpu")
    result.assert_outcomes(passed=1)


def test_a_bad_environment_value_touches_only_gelucheck_tests(pytester, monkeypatch):
    monkeypatch.setenv("GELUCHECK_BACKEND", "caffe")
    pytester.makepyfile(test_other="def test_other():\n    pass\n")
    assert pytester.runpytest_subprocess("test_other.py").ret == 0  # an unrelated suite runs
    pytester.makepyfile(test_gelu=TEST_FILE)
    result = pytester.runpytest_subprocess("test_gelu.py")
    assert result.ret != 0
    assert "$GELUCHECK_BACKEND: unknown backend ['caffe']" in result.stdout.str()


def test_missing_backend_is_skipped_with_the_reason(pytester):
    torch = pytest.importorskip("torch", reason="torch is not installed")
    if torch.cuda.is_available():
        pytest.skip("CUDA is present here: nothing to skip")
    pytester.makepyfile(TEST_FILE)
    result = pytester.runpytest_subprocess("--gelucheck-backend", "torch-cuda", "-rs")
    result.assert_outcomes(skipped=2)
    assert "CUDA is not available" in result.stdout.str()


def test_benchmarks_stay_out_of_the_default_run(request):
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                           "-p", "no:cacheprovider"], capture_output=True, text=True,
                          cwd=request.config.rootpath)
    assert "tests/benchmarks" not in done.stdout and "test_speed" not in done.stdout


def test_bench_compare_without_a_saved_run_says_how_to_make_one(tmp_path, request):
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "pytest", "tests/benchmarks", "--benchmark-only",
                           "--benchmark-compare", f"--benchmark-storage={tmp_path}",
                           "-p", "no:cacheprovider"], capture_output=True, text=True,
                          cwd=request.config.rootpath)
    assert done.returncode == 4  # pytest's usage error
    assert "no saved benchmark run" in done.stderr and "tox -e bench" in done.stderr


def _uncapped(monkeypatch):
    from gelucheck import tiers

    for variable in (*tiers.CAP_VARIABLES, "XLA_FLAGS"):
        monkeypatch.delenv(variable, raising=False)


def test_the_kernel_tier_is_set_before_a_test_loads_torch(pytester, monkeypatch):
    """--gelucheck-kernel-tier caps the libraries in pytest_configure: torch, loaded later
    by a test, runs oneDNN's AVX2 GELU and says so."""
    pytest.importorskip("torch", reason="torch is not installed")
    from gelucheck import tiers

    if "avx2" not in tiers.reachable():
        pytest.skip("this CPU cannot run the avx2 tier")
    _uncapped(monkeypatch)
    pytester.makepyfile("""
import os
from gelucheck import tiers

def test_capped():
    assert os.environ["ONEDNN_MAX_CPU_ISA"] == "AVX2"
    assert tiers.torch_tier().name == "avx2"
""")
    result = pytester.runpytest_subprocess("--gelucheck-kernel-tier", "avx2")
    result.assert_outcomes(passed=1)


def test_a_kernel_tier_asked_for_after_torch_chose_its_kernels_is_refused(pytester, monkeypatch):
    """A conftest that ran torch before the plugin could cap it: measuring would give another
    tier's figures under this tier's name, so the run stops and says why."""
    pytest.importorskip("torch", reason="torch is not installed")
    from gelucheck import tiers

    if tiers.reachable()[-1] == "avx2":
        pytest.skip("this CPU's own kernels are the avx2 tier's: nothing to refuse")
    _uncapped(monkeypatch)
    pytester.makeconftest("import torch\ntorch.nn.functional.gelu(torch.ones(64))\n")
    pytester.makepyfile("def test_nothing():\n    pass\n")
    result = pytester.runpytest_subprocess("--gelucheck-kernel-tier", "avx2")
    assert result.ret != 0
    err = result.stderr.str()
    assert "--gelucheck-kernel-tier avx2: torch had already loaded its kernels" in err
    assert "ONEDNN_MAX_CPU_ISA=AVX2" in err


def test_an_unknown_kernel_tier_in_the_environment_names_the_choices(pytester, monkeypatch):
    monkeypatch.setenv("GELUCHECK_KERNEL_TIER", "avx3")
    pytester.makepyfile("def test_nothing():\n    pass\n")
    result = pytester.runpytest_subprocess()
    assert result.ret != 0
    assert "$GELUCHECK_KERNEL_TIER: unknown kernel tier 'avx3'; valid choices: native, avx2" \
        in result.stderr.str()


def test_two_kernel_tiers_on_one_command_line_are_refused(pytester):
    """One would be dropped; the command line's one still overrides an ini file's addopts."""
    pytester.makeini("[pytest]\naddopts = --gelucheck-kernel-tier=avx2\n")
    pytester.makepyfile("import os\n\ndef test_tier():\n"
                        "    assert 'ONEDNN_MAX_CPU_ISA' not in os.environ\n")
    result = pytester.runpytest_subprocess("--gelucheck-kernel-tier", "avx2",
                                           "--gelucheck-kernel-tier=native")
    assert result.ret != 0
    assert "--gelucheck-kernel-tier is given as avx2 and native: give one" in \
        result.stderr.str()
    pytester.runpytest_subprocess("--gelucheck-kernel-tier", "native").assert_outcomes(passed=1)

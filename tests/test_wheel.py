"""gelucheck as another project meets it: a wheel built from this tree, installed into a fresh
virtual environment, used from a folder outside the repository. Marked ``wheel`` (it builds
and installs, a minute or two); .ci/run runs it after the main suite."""
import subprocess
import sys
import venv
from pathlib import Path

import pytest

pytestmark = pytest.mark.wheel
ROOT = Path(__file__).resolve().parents[1]

USER_MODULE = '''
import numpy as np
from scipy import special

from gelucheck.formats import narrow


def gelu(x):
    wide = x.astype(np.float64)
    return narrow(wide * special.ndtr(wide), x.dtype.name)


def gelu_off_by_one(x):
    y = gelu(x)
    return np.where(x > 1, np.nextafter(y, np.asarray(np.inf, y.dtype)), y).astype(x.dtype)
'''

USER_TESTS = '''
import pytest
from mymod import gelu, gelu_off_by_one

from gelucheck.testing import assert_max_ulp


def test_correct():
    assert_max_ulp(gelu, "gelu", "float16", 0.5, specials=False)


def test_wrong():
    with pytest.raises(AssertionError, match="not correctly rounded .* at x = "):
        assert_max_ulp(gelu_off_by_one, "gelu", "float16", 0.5, specials=False)


def test_own_option(request):
    assert request.config.getoption("--backend") == "mine"
'''

USER_CONFTEST = '''
def pytest_addoption(parser):
    parser.addoption("--backend", default="mine")
'''


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(python, gelucheck) of a fresh venv holding the wheel and its dependencies."""
    build = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(build),
                    str(ROOT)], check=True)
    (wheel,) = build.glob("gelucheck-*.whl")
    env = tmp_path_factory.mktemp("venv")
    venv.create(env, with_pip=True)
    python = env / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", str(wheel), "pytest"],
                   check=True)
    return python, env / "bin" / "gelucheck", wheel


@pytest.fixture
def project(tmp_path):
    (tmp_path / "mymod.py").write_text(USER_MODULE)
    (tmp_path / "test_user.py").write_text(USER_TESTS)
    (tmp_path / "conftest.py").write_text(USER_CONFTEST)
    return tmp_path


def _run(cmd, cwd):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, cwd=cwd,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(cwd)})


def test_the_wheel_carries_its_data(installed):
    import zipfile

    names = zipfile.ZipFile(installed[2]).namelist()
    from gelucheck.reference import store

    for name in store.read_manifest()["files"]:  # every file the manifest lists, and itself
        assert f"gelucheck/data/reference/{name}" in names, name
    assert "gelucheck/data/reference/manifest.json" in names
    # every data file of the source tree (search_landmarks.toml was once left out)
    data = Path(__file__).parents[1] / "src" / "gelucheck" / "data"
    for path in data.iterdir():
        if path.is_file():
            assert f"gelucheck/data/{path.name}" in names, path.name


def test_check_from_another_folder(installed, project):
    _python, gelucheck, _ = installed
    done = _run([gelucheck, "check", "--backend", "scipy", "--dtype", "float16",
                 "--max-ulp", "0.5", "--no-progress"], project)
    assert done.returncode == 0, done.stdout + done.stderr
    done = _run([gelucheck, "check", "--impl", "mymod:gelu_off_by_one", "--function", "gelu",
                 "--dtype", "float16", "--max-ulp", "0.5", "--no-progress"], project)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FAIL user:mymod:gelu_off_by_one gelu float16: max ulp" in done.stdout
    assert "worst x = " in done.stdout


def test_report_and_verify_from_another_folder(installed, project):
    _python, gelucheck, _ = installed
    done = _run([gelucheck, "report", "--backend", "numpy", "--dtype", "bfloat16",
                 "--no-progress"], project)
    assert done.returncode == 0, done.stderr
    done = _run([gelucheck, "reference", "verify", "--dtype", "float16", "--no-arb"], project)
    assert done.returncode == 0 and "reference data OK" in done.stdout, done.stdout


def test_pytest_in_the_users_project(installed, project):
    python, _, _ = installed
    done = _run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider"], project)
    assert done.returncode == 0 and "3 passed" in done.stdout, done.stdout + done.stderr
    suite = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--pyargs",
             "gelucheck.suite", "--gelucheck-impl", "mymod:gelu", "--gelucheck-function",
             "gelu", "--gelucheck-dtype", "float16", "-m", "not consistency"]
    done = _run(suite, project)  # no budget: held to the default, and x·ndtr(-inf) is NaN
    assert done.returncode == 1, done.stdout + done.stderr
    assert "no budget recorded, so held to --gelucheck-max-ulp 0.5" in done.stdout
    assert "special input -inf: expected -0.0, computed nan" in done.stdout
    gelucheck = Path(python).parent / "gelucheck"
    done = _run([gelucheck, "budgets", "--write", "mine.toml", "--impl", "mymod:gelu",
                 "--function", "gelu"], project)
    assert done.returncode == 0, done.stdout + done.stderr
    done = _run([*suite, "--gelucheck-budgets", "mine.toml", "-W", "error::UserWarning"],
                project)  # its own budget holds it, and no entry of it reads as stale
    assert done.returncode == 0, done.stdout + done.stderr


FAKE_TORCH = "Metadata-Version: 2.1\nName: torch\nVersion: {version}\n"


def test_the_torch_extra_keeps_a_newer_torch_a_user_has(installed, tmp_path):
    """pip install 'gelucheck[torch]' where a torch newer than any gelucheck was tested with is
    installed: pip keeps it (an extra pinned to this machine's torch would replace it). The
    torch here is a distribution's metadata alone, and pip only resolves (--dry-run)."""
    python, _, wheel = installed
    site = next(Path(python).parents[1].glob("lib/python*/site-packages"))
    # newer than any gelucheck was tested with, within this machine's pip cap (torch<=2.14.1)
    info = site / "torch-2.14.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(FAKE_TORCH.format(version="2.14.0"))
    (info / "INSTALLER").write_text("pip\n")
    (info / "RECORD").write_text("")
    def resolved(*requirements):
        report = tmp_path / "report.json"
        done = _run([python, "-m", "pip", "install", "--dry-run", "--report", report,
                     *requirements], tmp_path)
        assert done.returncode == 0, done.stderr[-2000:]
        import json

        return [i["metadata"]["name"] for i in json.loads(report.read_text())["install"]]

    try:
        assert "torch" not in resolved(f"{wheel}[torch]")
        # the control: a pin, as the extra had, would replace it
        assert "torch" in resolved(f"{wheel}[torch]", "torch==2.13.0")
    finally:
        import shutil

        shutil.rmtree(info)


def test_the_torch_extra_leaves_an_installed_torch_as_it_is(tmp_path):
    """The issue's case as a user meets it: a venv with torch 2.13.0 (this machine's CPU
    build), then the wheel with '[torch]': torch's version is the same after."""
    build = tmp_path / "wheel"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(build),
                    str(ROOT)], check=True)
    (wheel,) = build.glob("gelucheck-*.whl")
    venv.create(tmp_path / "venv", with_pip=True)
    python = tmp_path / "venv" / "bin" / "python"
    version = [str(python), "-c", "import torch; print(torch.__version__)"]
    subprocess.run([str(python), "-m", "pip", "install", "-q", "torch==2.13.0"], check=True)
    before = subprocess.run(version, check=True, capture_output=True, text=True).stdout
    subprocess.run([str(python), "-m", "pip", "install", "-q", f"{wheel}[torch]"], check=True)
    after = subprocess.run(version, check=True, capture_output=True, text=True).stdout
    assert before.startswith("2.13.0") and after == before

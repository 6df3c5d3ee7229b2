"""A third-party backend: one module and one entry point in the group gelucheck.backends, and
it is listed, measured and selectable with no change to gelucheck (docs/design.md, Adding a
backend). Nothing is installed: a *.dist-info folder on the path declares the entry point."""
import json
import subprocess
import sys
import textwrap

import pytest

BACKEND = '''
"""The smallest complete backend: GELU as x*ndtr(x) in float64, rounded once."""
import numpy as np
from scipy import special

from gelucheck.backends import Backend, Implementation
from gelucheck.formats import narrow


def gelu(x):
    wide = x.astype(np.float64)
    return narrow(wide * special.ndtr(wide), x.dtype.name)


def load():
    return Backend("mine", True, "", "0.1", (
        Implementation("mine", "x*ndtr", "gelu", gelu,
                       description="x*ndtr(x) in float64, rounded once"),))
'''


def _plant(tmp_path, entry="mine = my_backend:load"):
    (tmp_path / "my_backend.py").write_text(BACKEND)
    info = tmp_path / "my_backend-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: my-backend\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[gelucheck.backends]\n{entry}\n")


def _gelucheck(tmp_path, *argv):
    env_path = f"{tmp_path}:{':'.join(p for p in sys.path if p)}"
    return subprocess.run([sys.executable, "-m", "gelucheck.cli", *argv], capture_output=True,
                          text=True, env={"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin"},
                          cwd=tmp_path)


@pytest.mark.slow
def test_an_entry_point_backend_is_listed_and_measured(tmp_path):
    _plant(tmp_path)
    listed = _gelucheck(tmp_path, "list")
    assert listed.returncode == 0, listed.stderr
    assert "mine: available (0.1)" in listed.stdout
    assert "x*ndtr(x) in float64, rounded once" in listed.stdout
    out = tmp_path / "r.json"
    done = _gelucheck(tmp_path, "check", "--backend", "mine", "--dtype", "float16",
                      "--json", str(out), "--no-progress")
    assert done.returncode == 0, done.stderr
    (result,) = json.loads(out.read_text())["results"]
    assert (result["backend"], result["implementation"], result["function"]) == \
        ("mine", "x*ndtr", "gelu")
    assert result["n_inputs"] == 63488 and result["max_ulp"] <= 0.5 + 1e-9


@pytest.mark.slow
def test_a_loader_that_fails_leaves_the_backend_unavailable_with_the_reason(tmp_path):
    _plant(tmp_path, entry="broken = my_backend:no_such_loader")
    listed = _gelucheck(tmp_path, "list")
    assert listed.returncode == 0, listed.stderr
    assert "broken: unavailable: its loader my_backend:no_such_loader failed" in listed.stdout
    assert "scipy: available" in listed.stdout  # the others are unaffected


@pytest.mark.slow  # pytest in a process of its own: seconds
def test_the_pytest_plugin_parametrizes_over_it(tmp_path):
    _plant(tmp_path)
    (tmp_path / "test_mine.py").write_text(textwrap.dedent('''
        def test_ulp(accuracy_case):
            impl, fmt = accuracy_case
            assert impl.backend == "mine"
    '''))
    env_path = f"{tmp_path}:{':'.join(p for p in sys.path if p)}"
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "--gelucheck-backend", "mine", "test_mine.py"], capture_output=True,
                          text=True, env={"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin"},
                          cwd=tmp_path)
    assert "4 passed" in done.stdout, done.stdout + done.stderr


def test_a_checkout_that_was_never_installed_is_told_to_install(tmp_path):
    """gelucheck imported from its source folder alone (no dist-info declares its backends):
    a clear error, not 'unknown backend ...; valid choices: ' with nothing after it."""
    import gelucheck

    src = tmp_path / "src"
    src.mkdir()
    (src / "gelucheck").symlink_to(gelucheck.__path__[0])
    # the site-packages holding numpy and the others, but not gelucheck's own metadata
    deps = [p for p in sys.path if p.endswith("site-packages")]
    isolated = tmp_path / "deps"
    isolated.mkdir()
    for site in deps:
        for entry in __import__("pathlib").Path(site).iterdir():
            if not entry.name.startswith(("gelucheck", "__editable__", "_gelucheck")) \
                    and not (isolated / entry.name).exists():
                (isolated / entry.name).symlink_to(entry)
    done = subprocess.run([sys.executable, "-S", "-m", "gelucheck.cli", "report", "--backend",
                           "numpy", "--no-progress"], capture_output=True, text=True,
                          env={"PYTHONPATH": f"{src}:{isolated}", "PATH": "/usr/bin:/bin"},
                          cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "imported without being installed" in done.stderr
    assert "pip install --no-deps -e ." in done.stderr

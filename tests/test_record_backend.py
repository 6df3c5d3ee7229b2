"""scripts/record-backend.sh, how the budgets of a backend on another machine (torch-cuda on a
GPU) are recorded: run here on SciPy, the steps a GPU session runs once, with no second try."""
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gelucheck import budgets
from gelucheck.functions import FUNCTIONS

ROOT = Path(__file__).parents[1]
SCRIPT = ROOT / "scripts" / "record-backend.sh"


def test_its_sweeps_are_every_function_the_sweep_takes():
    """The sweep step's default list: erf and erfc had been left out when they came in, while
    the docs said the script recorded them."""
    listed = re.search(r"\$\{SWEEP_FUNCTIONS-([^}]*)\}", SCRIPT.read_text()).group(1).split()
    assert sorted(listed) == sorted(FUNCTIONS)


@pytest.mark.slow  # a report and its budgets in a process of their own (seconds)
@pytest.mark.skipif(shutil.which("timeout") is None, reason="the script needs coreutils' timeout")
def test_it_records_a_backends_report_and_budgets_into_a_copy(tmp_path):
    out = tmp_path / "out"
    bin_dir = Path(sys.executable).parent  # its python3 is this interpreter (a venv's)
    env = {**os.environ, "STEPS": "report budgets", "PATH": f"{bin_dir}:{os.environ['PATH']}",
           "PYTHONPATH": str(ROOT / "src")}
    shipped = budgets.DEFAULT_PATH.read_bytes()
    done = subprocess.run(["bash", str(SCRIPT), str(out), "scipy"], cwd=ROOT, env=env,
                          text=True, capture_output=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    steps = (out / "steps.txt").read_text()
    assert re.search(r"^report: exit 0 in", steps, re.M), steps
    assert re.search(r"^budgets: exit 0 in", steps, re.M), steps
    measured = {r["function"] for r in json.loads((out / "report.json").read_text())["results"]
                if r.get("backend") == "scipy"}
    assert {"erf", "erfc", "phi", "gelu"} <= measured
    written = budgets.load(out / "budgets.toml")
    assert written.entries.keys() == budgets.load().entries.keys()  # a copy: none dropped
    assert budgets.DEFAULT_PATH.read_bytes() == shipped  # never written in place

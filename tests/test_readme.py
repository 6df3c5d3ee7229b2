"""README.md as a user reads it: short, and every shell block marked runnable
(``<!-- runnable -->`` above it) passes when run in a fresh folder, in order, with this
environment's gelucheck on the PATH."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
RUNNABLE = re.compile(r"<!-- runnable -->\n```bash\n(.*?)```", re.S)


def test_the_readme_is_at_most_250_lines_and_starts_with_the_two_commands():
    lines = README.read_text().splitlines()
    assert len(lines) <= 250
    assert lines[2] == "```bash" and lines[3].endswith(".venv/bin/gelucheck report")
    assert "pytest" in lines[4] and "-c constraints/tested.txt" in lines[4]


@pytest.mark.slow  # a check, a user's tests and the plugin's suite: whole processes
def test_every_runnable_block_of_the_readme_passes(tmp_path):
    blocks = RUNNABLE.findall(README.read_text())
    assert len(blocks) >= 3
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
               PYTHONPATH=str(tmp_path))
    env.pop("PYTEST_ADDOPTS", None)
    for block in blocks:
        done = subprocess.run(["bash", "-e", "-c", block], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"{block}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"

"""The wheel carries the reference data: ``reference/`` (the source of truth in the repository,
kept once) is copied into the built package as ``gelucheck/data/reference/``. Everything else
is declared in pyproject.toml."""
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

REFERENCE = Path(__file__).parent / "reference"


class BuildWithReference(build_py):
    def run(self):
        super().run()
        if self.editable_mode:  # an editable install reads reference/ where it is
            return
        target = Path(self.build_lib) / "gelucheck" / "data" / "reference"
        target.mkdir(parents=True, exist_ok=True)
        for path in REFERENCE.rglob("*"):
            if path.suffix in (".npz", ".json", ".csv"):
                (target / path.relative_to(REFERENCE)).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, target / path.relative_to(REFERENCE))


setup(cmdclass={"build_py": BuildWithReference})

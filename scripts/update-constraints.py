#!/usr/bin/env python3
"""Rewrite constraints/tested.txt: the newest versions the package index serves today for
every environment CI and tox install, each resolved in a fresh venv with no constraints; and
constraints/timm.txt, tox -e timm's apart (its torch is another build).

    python3 scripts/update-constraints.py          # then: .ci/run, and commit if green

The main environment ('.[all]' with tox and ruff) is resolved first and its versions win
where a later one (TensorFlow's, MLX's, JAX's) resolved a package differently, so that one
file serves every env (pip ignores the lines for packages an env does not install).
`tox -e latest` shows what would change before this is run.
"""
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "constraints" / "tested.txt"
# Held, not resolved: the CPU build on this machine's disk (the newest torch on the index is a
# CUDA build of several GB).
HELD = "torch==2.13.0\n"
# timm imports torchvision, whose operators load only beside the torch build it was made for:
# the pair on this machine's disk (a CUDA build; it runs on the CPU)
TIMM = ROOT / "constraints" / "timm.txt"
TIMM_HELD = "torch==2.14.1\ntorchvision==0.29.1\n"
TIMM_HEADER = """\
# tox -e timm: the versions it installs (pip -c), resolved fresh by
# scripts/update-constraints.py. timm imports torchvision, whose operators load only beside
# the torch build it was made for: torch 2.14.1 and torchvision 0.29.1, a pair this machine
# holds on its disk (a CUDA build; it runs on the CPU). Not what users get: pyproject.toml's
# extras have open ranges.
"""
# (extras, further packages): one fresh venv each, in this order of precedence
HEADER = """\
# The versions CI and tox's default envs install (PIP_CONSTRAINT / pip -c): tested together,
# so that a green run today is a green run tomorrow. Written by scripts/update-constraints.py
# (the newest the package index served, each env resolved fresh); `tox -e latest` runs the
# suite without it. torch==2.13.0 takes the CPU build on this machine's disk. Not what users
# get: pyproject.toml's extras have open ranges.
"""
ENVIRONMENTS = [("all", ["tox>=4", "ruff", "mypy", "mutmut>=3"]), ("test,tensorflow", []),
                ("test,mlx", []), ("test,jax", []), ("test,openvino", []),
                ("test,tinygrad", []), ("test,ggml", []), ("test,litert", []),
                ("docs", [])]


def resolve(extras: str, more: list[str], folder: Path, held_pins: str = HELD
            ) -> dict[str, str]:
    venv = folder / extras.replace(",", "-")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip"]
    held = folder / "held.txt"
    held.write_text(held_pins)
    subprocess.run([*pip, "install", "-q", "-e", f"{ROOT}[{extras}]", *more], check=True,
                   env={**os.environ, "PIP_CONSTRAINT": str(held)})
    frozen = subprocess.run([*pip, "freeze", "--exclude-editable"], check=True,
                            capture_output=True, text=True).stdout
    pins = {}
    for line in frozen.splitlines():
        name, sep, version = line.partition("==")
        if sep and not line.startswith("#"):
            pins[name.lower().replace("_", "-")] = f"{name}=={version.split('+')[0]}"
    return pins


def main() -> None:
    merged: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as folder:
        for extras, more in ENVIRONMENTS:
            for key, pin in resolve(extras, more, Path(folder)).items():
                merged.setdefault(key, pin)
        timm = resolve("test,timm", [], Path(folder), TIMM_HELD)
    for target, header, pins in ((TARGET, HEADER, merged), (TIMM, TIMM_HEADER, timm)):
        target.write_text(header + "".join(f"{pins[k]}\n" for k in sorted(pins)))
        print(f"{target.relative_to(ROOT)}: {len(pins)} packages")


if __name__ == "__main__":
    main()

"""What users install has open ranges; what CI installs is pinned apart, in constraints/.

pyproject.toml's dependencies carry lower bounds only (an extra that pinned torch would replace
the torch a user already has); constraints/oldest.txt is exactly those lower bounds (tox -e
oldest installs it); constraints/tested.txt pins every one of them inside its range.
"""
from pathlib import Path

import pytest
import tomlkit
from packaging import requirements
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]


def _project():
    return tomlkit.parse((ROOT / "pyproject.toml").read_text())["project"]


def _direct(extras=("all",)) -> dict[str, requirements.Requirement]:
    """The requirements of the core and of these extras, the self-references followed."""
    project, seen, out = _project(), set(), {}
    todo = list(project["dependencies"])
    pending = list(extras)
    while pending:
        extra = pending.pop()
        if extra not in seen:
            seen.add(extra)
            todo += list(project["optional-dependencies"][extra])
        while todo:
            req = requirements.Requirement(str(todo.pop()))
            if req.name == "gelucheck":
                pending += sorted(req.extras)
            else:
                out[_key(req.name)] = req
    return out


def _key(name: str) -> str:
    return name.lower().replace("_", "-")


def _pins(name: str) -> dict[str, str]:
    pins = {}
    for line in (ROOT / "constraints" / name).read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            package, sep, version = line.partition("==")
            assert sep, f"constraints/{name}: {line!r} is not an exact pin"
            pins[_key(package)] = version
    return pins


def test_no_published_requirement_is_pinned_and_each_has_a_lower_bound():
    project = _project()
    every = list(project["dependencies"]) + [r for extra in project["optional-dependencies"]
                                            .values() for r in extra]
    for text in every:
        req = requirements.Requirement(str(text))
        if req.name == "gelucheck":
            continue
        operators = {s.operator for s in req.specifier}
        assert not operators & {"==", "===", "~="}, f"{text}: users' ranges stay open"
        assert ">=" in operators, f"{text}: no lower bound"


def test_oldest_constraints_are_the_lower_bounds():
    lower = {name: Version(next(s.version for s in req.specifier if s.operator == ">="))
             for name, req in _direct().items()}
    assert {name: Version(v) for name, v in _pins("oldest.txt").items()} == lower


@pytest.mark.parametrize("extras", [("all",), ("test", "tensorflow"), ("test", "mlx")],
                         ids=",".join)
def test_tested_constraints_pin_every_direct_dependency_inside_its_range(extras):
    pins = _pins("tested.txt")
    for name, req in _direct(extras).items():
        assert name in pins, f"constraints/tested.txt does not pin {name}"
        assert req.specifier.contains(pins[name], prereleases=True), (name, pins[name])


def test_timm_constraints_pin_every_direct_dependency_and_torch_s_matching_torchvision():
    """tox -e timm installs from constraints/timm.txt alone: timm imports torchvision, which
    loads only beside the torch build it was made for, so the two are pinned as a pair."""
    pins = _pins("timm.txt")
    for name, req in _direct(("test", "timm")).items():
        assert name in pins, f"constraints/timm.txt does not pin {name}"
        assert req.specifier.contains(pins[name], prereleases=True), (name, pins[name])
    assert "torchvision" in pins

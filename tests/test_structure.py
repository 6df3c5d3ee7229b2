"""The package's modules import each other without a circle - function-level imports counted,
since they hide a circle rather than remove it - and the command line is a thin entry point
over one module per command."""
import ast
from pathlib import Path

import gelucheck

PACKAGE = Path(gelucheck.__file__).resolve().parent


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = ("gelucheck", *path.relative_to(PACKAGE).with_suffix("").parts)
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The gelucheck modules ``name`` imports anywhere in its file: ``from . import x`` names
    the module x where there is one, else the package."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name in modules}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            for alias in node.names:
                candidate = f"{target}.{alias.name}"
                found.add(candidate if candidate in modules else target)
    return {m for m in found if m in modules and m != name}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_circle_at_any_level():
    modules = _modules()
    graph = {name: _imports(name, path, modules) for name, path in modules.items()}
    assert _cycles(graph) == []


def test_the_detector_finds_a_planted_circle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_each_command_is_a_module_and_the_entry_point_is_thin():
    from gelucheck import commands

    assert len((PACKAGE / "cli.py").read_text().splitlines()) < 80
    for module in commands.MODULES:
        assert callable(module.add), module.__name__


def test_every_design_section_cited_in_the_code_exists():
    """Code cites docs/design.md by section ("docs/design.md, The sweep"); a renamed or
    missing section leaves the reader nowhere."""
    import re

    headings = [line.lstrip("#").strip() for line in
                (PACKAGE.parents[1] / "docs" / "design.md").read_text().splitlines()
                if line.startswith("#")]
    cited = set()
    for path in PACKAGE.rglob("*.py"):
        text = " ".join(path.read_text().split())  # a citation may wrap
        cited |= {(path.name, m) for m in re.findall(r"docs/design\.md, ([A-Z][\w ′:-]*?)[),.;]",
                                                     text)}
    missing = sorted((f, c) for f, c in cited if not any(h.startswith(c) for h in headings))
    assert cited and missing == []

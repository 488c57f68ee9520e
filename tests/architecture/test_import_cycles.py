"""Import arrows point one way: a module never imports one that imports it back.

Every ``import`` counts, including those under ``TYPE_CHECKING``: a cycle
kept only for type hints still says two modules cannot be understood (or
moved) apart. The shells depend on the core, never the reverse.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def module_name(root: Path, path: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, modules: set[str]) -> set[str]:
    """The project modules `path` imports (``from a import b`` names ``a.b``
    when that is a module, else ``a``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                child = f"{node.module}.{alias.name}"
                found.add(child if child in modules else node.module)
    return found & modules


def cycles(root: Path, package: str) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan).

    `root` is the folder that holds `package` as it is imported: for this
    project, ``src/`` (whose ``reqfold/`` links to the top-level folders).
    """
    files = sorted((root / package).rglob("*.py"))
    paths = {module_name(root, path): path for path in files}
    graph = {
        name: imports_of(path, set(paths)) - {name} for name, path in paths.items()
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return groups


@pytest.mark.parametrize("package", ["reference", "fakes", "conformance"])
def test_no_two_modules_of_the_package_import_each_other(package: str) -> None:
    assert cycles(ROOT / "src", f"reqfold/{package}") == []


def test_the_cycle_finder_finds_a_cycle_kept_only_for_type_hints(
    tmp_path: Path,
) -> None:
    """The check above can fail: in a throwaway package, two modules that
    import each other (one only under TYPE_CHECKING) are a cycle."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from pkg import b\n")
    (package / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.a import x\n"
    )
    (package / "c.py").write_text("import pkg.a\n")
    assert cycles(tmp_path, "pkg") == [["pkg.a", "pkg.b"]]

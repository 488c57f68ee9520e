"""What a Python file imports, by name, with the one package name looked through.

Everything the project installs lives under `reqfold`, so `reqfold.fakes.app`
belongs to `fakes` and ``from reqfold import reference`` imports `reference`.
The import-boundary tests compare these names.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = "reqfold"


def imported_names(path: Path) -> set[str]:
    """Every module `path` imports, anywhere in the file, with the package
    prefix removed (``from reqfold import fakes`` names ``fakes``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == PACKAGE:
                names.update(f"{PACKAGE}.{alias.name}" for alias in node.names)
            else:
                names.add(node.module)
    return {without_package(name) for name in names}


def without_package(name: str) -> str:
    """`reqfold.fakes.app` -> `fakes.app`; other names unchanged."""
    head, _, rest = name.partition(".")
    return rest if head == PACKAGE and rest else name


def top_level(name: str) -> str:
    """The first part of a module name, `reqfold` looked through."""
    return without_package(name).split(".")[0]

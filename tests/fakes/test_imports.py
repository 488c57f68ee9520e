"""`fakes` is this project's package and knows nothing of the other two."""

from __future__ import annotations

import ast
from pathlib import Path

import fakes

PACKAGE = Path(fakes.__file__).resolve().parent
FORBIDDEN = ("conformance", "reference")


def _imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_fakes_is_imported_from_this_repository():
    repository = Path(__file__).resolve().parents[2]
    assert PACKAGE.is_relative_to(repository)


def test_fakes_never_imports_conformance_or_reference():
    offenders = {
        str(path.relative_to(PACKAGE)): sorted(
            name for name in _imported_modules(path) if name.split(".")[0] in FORBIDDEN
        )
        for path in PACKAGE.rglob("*.py")
    }
    assert {path: names for path, names in offenders.items() if names} == {}


def test_core_modules_do_no_io_and_read_no_clock():
    pure = [
        "tokenizer.py",
        "cache_index.py",
        "prompt.py",
        "diagnostics.py",
        "script.py",
        "capture.py",
        "provider.py",
        "dialects/openai_chat.py",
        "dialects/anthropic.py",
        "dialects/common.py",
        "control.py",
    ]
    banned = {
        "time",
        "random",
        "socket",
        "asyncio",
        "subprocess",
        "uvicorn",
        "datetime",
    }
    found = {name: sorted(_imported_modules(PACKAGE / name) & banned) for name in pure}
    assert {name: mods for name, mods in found.items() if mods} == {}

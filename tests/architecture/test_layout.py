"""The project's shape: import direction, purity of the core, package identity."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PURE_MODULES = (
    "reference/header.py",
    "reference/writer.py",
    "reference/session_log.py",
    "reference/messages.py",
    "reference/json_values.py",
    "reference/request.py",
    "reference/revisions.py",
)
IMPURE = {
    "asyncio",
    "httpx",
    "socket",
    "subprocess",
    "time",
    "random",
    "uuid",
    "os",
    "io",
}


def imported_top_levels(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize(
    ("package", "forbidden"),
    [("reference", {"conformance", "fakes"}), ("fakes", {"conformance", "reference"})],
)
def test_reference_and_fakes_never_import_the_suite(
    package: str, forbidden: set[str]
) -> None:
    offenders = {
        str(path.relative_to(ROOT)): sorted(bad)
        for path in sorted((ROOT / package).rglob("*.py"))
        if (bad := imported_top_levels(path) & forbidden)
    }
    assert offenders == {}


@pytest.mark.parametrize("module", PURE_MODULES)
def test_the_codec_and_log_modules_do_no_io(module: str) -> None:
    assert imported_top_levels(ROOT / module) & IMPURE == set()


@pytest.mark.parametrize("name", ["reference", "conformance", "fakes"])
def test_generic_package_names_resolve_to_this_project(name: str) -> None:
    module = importlib.import_module(name)
    assert module.__file__ is not None
    assert Path(module.__file__).resolve().is_relative_to(ROOT)

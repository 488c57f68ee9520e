"""The project's shape: import direction, purity of the core, package identity."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
from import_names import imported_names, top_level

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
    return {top_level(name) for name in imported_names(path)}


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
def test_the_three_parts_resolve_to_this_project_under_one_name(name: str) -> None:
    module = importlib.import_module(f"reqfold.{name}")
    assert module.__file__ is not None
    assert Path(module.__file__).resolve().is_relative_to(ROOT)

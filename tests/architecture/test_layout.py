"""The project's shape: import direction, purity of the core, package identity."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
from import_names import imported_names, top_level
from reference_layout import launchers, top_modules

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "reference"
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
    "sys",
    "pathlib",
    "tempfile",
    "threading",
}
"""Modules that do I/O, read a clock or draw randomness."""
SHELLS = {"reference.shells", "reference.loop"}
"""The reference's own impure folders: the pure core imports neither."""


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


def impure_imports(path: Path) -> set[str]:
    """What `path` imports that does I/O: an impure module, or a shell."""
    names = imported_names(path)
    shells = {name for name in names if any(name.startswith(shell) for shell in SHELLS)}
    return {top_level(name) for name in names} & IMPURE | shells


@pytest.mark.parametrize("path", top_modules(REFERENCE), ids=lambda path: path.name)
def test_every_module_at_the_top_of_reference_does_no_io(path: Path) -> None:
    assert impure_imports(path) == set()


@pytest.mark.parametrize("path", launchers(REFERENCE), ids=lambda path: path.name)
def test_each_launcher_at_the_top_of_reference_runs_a_shell(path: Path) -> None:
    shell = REFERENCE / "shells" / path.name
    assert shell.is_file()
    assert imported_names(path) == {f"reference.shells.{path.stem}"}


def test_the_top_of_reference_is_its_core_and_the_documented_launchers() -> None:
    assert {path.stem for path in launchers(REFERENCE)} == {
        "adapter",
        "harness_adapter",
        "chat",
    }
    assert len(top_modules(REFERENCE)) >= 10


def test_the_purity_check_finds_io_and_a_launcher_that_does_more(
    tmp_path: Path,
) -> None:
    """The checks above can fail: in a throwaway folder, a module that
    opens a file through os, one that imports a shell, and a launcher with
    a statement outside its guard are each found."""
    (tmp_path / "pure.py").write_text('"""Pure."""\nimport json\n')
    (tmp_path / "io_.py").write_text("import os.path\n")
    (tmp_path / "uses_shell.py").write_text(
        "from reqfold.reference.shells import jsonl\n"
    )
    (tmp_path / "launcher.py").write_text(
        '"""Run."""\n'
        'if __name__ == "__main__":\n'
        "    import reqfold.reference.shells.x\n"
    )
    (tmp_path / "not_a_launcher.py").write_text(
        'import sys\nif __name__ == "__main__":\n    pass\n'
    )

    found = {path.name: impure_imports(path) for path in top_modules(tmp_path)}

    assert [path.name for path in launchers(tmp_path)] == ["launcher.py"]
    assert found == {
        "io_.py": {"os"},
        "not_a_launcher.py": {"sys"},
        "pure.py": set(),
        "uses_shell.py": {"reference.shells"},
    }


@pytest.mark.parametrize("name", ["reference", "conformance", "fakes"])
def test_the_three_parts_resolve_to_this_project_under_one_name(name: str) -> None:
    module = importlib.import_module(f"reqfold.{name}")
    assert module.__file__ is not None
    assert Path(module.__file__).resolve().is_relative_to(ROOT)

"""The gallery of known-bad harnesses uses only the reference's documented seams.

A known-bad harness is the reference with one defect, written through a
public seam (docs/reference-harness.md, "Seams for known-bad variants"), so
a refactor of the loop's private state and helpers cannot break the
gallery. Here "private" is any name starting with one underscore: an
import of one from ``reqfold``, an attribute read or written through any
object (``self._prefix``, ``loop._state``, ``adapter._frame``), or a method
of that name defined in a class (an override). Attributes of standard
library modules (``os._exit``) are not the reference's and stay allowed.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from reqfold.reference.loop import AgentLoop

GALLERY = Path(__file__).resolve().parents[1] / "conformance"
FOLDERS = ("bad_harnesses", "chaos_harnesses", "partial_harnesses", "drift_harnesses")
"""The folders whose harnesses are the reference with a defect."""


def is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_uses(source: str) -> list[str]:
    """Every use of a private name of the reference in `source`, as
    ``line: what``."""
    tree = ast.parse(source)
    other_modules = {
        (alias.asname or alias.name).partition(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
        if not alias.name.startswith("reqfold")
    }
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
            "reqfold"
        ):
            found += [
                f"{node.lineno}: import {alias.name}"
                for alias in node.names
                if is_private(alias.name)
            ]
        elif isinstance(node, ast.Attribute) and is_private(node.attr):
            owner = node.value
            if not (isinstance(owner, ast.Name) and owner.id in other_modules):
                found.append(f"{node.lineno}: .{node.attr}")
        elif isinstance(node, ast.ClassDef):
            found += [
                f"{item.lineno}: def {item.name}"
                for item in node.body
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
                and is_private(item.name)
            ]
    return found


HARNESSES = sorted(
    path for folder in FOLDERS for path in (GALLERY / folder).glob("*.py")
)


@pytest.mark.parametrize("path", HARNESSES, ids=lambda path: path.stem)
def test_a_gallery_harness_uses_no_private_name_of_the_reference(path: Path) -> None:
    assert private_uses(path.read_text(encoding="utf-8")) == []


def test_the_gallery_folders_hold_harnesses() -> None:
    assert all(any((GALLERY / folder).glob("*.py")) for folder in FOLDERS)


@pytest.mark.parametrize(
    ("source", "use"),
    [
        ("self._prefix = None", "1: ._prefix"),
        ("loop._state.running", "1: ._state"),
        ("from reqfold.reference.loop.agent import _TurnEnd", "1: import _TurnEnd"),
        ("class Bad:\n    async def _run_turn(self): ...", "2: def _run_turn"),
        (
            "from reqfold.reference.shells import adapter\nadapter._frame(1)",
            "2: ._frame",
        ),
    ],
)
def test_each_kind_of_private_use_is_found(source: str, use: str) -> None:
    assert private_uses(source) == [use]


def test_a_standard_library_modules_private_name_is_not_the_references() -> None:
    assert private_uses("import os\nos._exit(3)") == []
    assert private_uses("from _chaos import serve\n__name__.upper()") == []


DOCS = Path(__file__).resolve().parents[2] / "docs" / "reference-harness.md"


def documented_loop_seams() -> list[str]:
    """The method names of the ``AgentLoop`` seam table in the docs."""
    _, heading, section = DOCS.read_text(encoding="utf-8").partition(
        "\n## Seams for known-bad variants\n"
    )
    assert heading
    return re.findall(r"^\| `(\w+)\(", section.split("\n## ")[0], re.MULTILINE)


def test_every_documented_seam_is_a_public_method_of_the_loop() -> None:
    seams = documented_loop_seams()
    assert len(seams) >= 10
    assert [
        name for name in seams if not callable(getattr(AgentLoop, name, None))
    ] == []


def test_every_seam_the_gallery_overrides_is_documented() -> None:
    """A loop method a known-bad harness overrides is a seam the docs list."""
    public = {name for name in vars(AgentLoop) if not name.startswith("_")}
    overridden: set[str] = set()
    for path in HARNESSES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and any(
                isinstance(base, ast.Name) and base.id == "AgentLoop"
                for base in node.bases
            ):
                overridden.update(
                    item.name
                    for item in node.body
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
                )
    assert overridden & public
    undocumented = (overridden & public) - set(documented_loop_seams())
    assert undocumented <= {"dispose"}  # the loop's own public API

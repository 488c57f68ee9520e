"""The checker's rule machines keep to what they own (issue 30).

Read from the source: each field of an open step is written by the one
machine `OpenStep`'s docstring names, and the open turn and step
(`Position`) by the turn rules alone. At run time: no machine is wired to
another after it is built (the driver hands collaborators to constructors;
the callbacks are read-only, and a built checker's collaborators are the
objects it made).
"""

from __future__ import annotations

import ast
import re
from dataclasses import fields
from pathlib import Path

import pytest

from reqfold.conformance.check import log_rules
from reqfold.conformance.check.log_rules import LogChecker
from reqfold.conformance.check.reconstruction import Reconstruction
from reqfold.conformance.check.surface_rules import SurfaceRules
from reqfold.conformance.check.turn_rules import OpenStep, Position, TurnRules
from reqfold.reference.revisions import LATEST

CHECK = Path(log_rules.__file__).resolve().parent


def owners_from_docstring(doc: str) -> dict[str, str]:
    """The field each machine writes, as the docstring says: a class name in
    single backquotes, then the fields (in double backquotes) it owns; the
    owner's module is the file of the check package that defines the class."""
    owners: dict[str, str] = {}
    module: str | None = None
    for machine, field_name in re.findall(r"(?<!`)`(\w+)`(?!`)|``(\w+)``", doc):
        if machine:
            defining = [
                path.name
                for path in CHECK.glob("*.py")
                if f"\nclass {machine}" in path.read_text(encoding="utf-8")
            ]
            assert len(defining) == 1, machine
            module = defining[0]
        else:
            assert module is not None, field_name
            owners[field_name] = module
    return owners


OWNERS = owners_from_docstring(OpenStep.__doc__ or "")
"""The fields of `OpenStep` written after it is made, and the one module
that may write each, from `OpenStep`'s docstring (`TurnRules` makes it with
the others)."""


def test_the_owners_are_read_from_the_open_steps_docstring() -> None:
    assert OWNERS["responded"] == "request_rules.py"
    assert OWNERS["cache_warning"] == "opening_rules.py"
    doc = "`TurnRules` the first, `SurfaceRules` ``seq`` and ``line``."
    assert owners_from_docstring(doc) == {
        "seq": "surface_rules.py",
        "line": "surface_rules.py",
    }


MACHINES = ("envelope", "turns", "surface", "opening", "requests")


def assigned_attributes(path: Path) -> list[ast.Attribute]:
    """Every attribute `path` assigns to (plain, augmented or annotated)."""
    targets: list[ast.Attribute] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Assign):
            found = [
                element
                for target in node.targets
                for element in (
                    target.elts if isinstance(target, ast.Tuple) else [target]
                )
            ]
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            found = [node.target]
        else:
            continue
        targets += [target for target in found if isinstance(target, ast.Attribute)]
    return targets


def writers(attribute: str) -> set[str]:
    """The modules of the checker that assign an attribute of this name."""
    return {
        path.name
        for path in CHECK.glob("*.py")
        for target in assigned_attributes(path)
        if target.attr == attribute
    }


def test_the_owned_fields_are_the_open_steps_fields_made_after_it() -> None:
    made_with = {"turn", "step", "line", "seq", "ordinal"}
    assert {field.name for field in fields(OpenStep)} == made_with | set(OWNERS)


def test_each_field_of_an_open_step_is_written_by_its_owner_alone() -> None:
    for name, owner in OWNERS.items():
        assert writers(name) == {owner}, name


def test_the_open_turn_and_step_are_written_by_the_turn_rules_alone() -> None:
    assert {field.name for field in fields(Position)} == {"turn", "step"}
    for path in CHECK.glob("*.py"):
        for target in assigned_attributes(path):
            owner = target.value
            through_position = (
                isinstance(owner, ast.Name) and owner.id == "position"
            ) or (isinstance(owner, ast.Attribute) and owner.attr == "position")
            if through_position:
                assert path.name == "turn_rules.py", (path.name, target.attr)


@pytest.mark.parametrize("rebuilding", [False, True], ids=["log", "requests"])
def test_a_built_checkers_machines_hold_the_collaborators_it_made(
    rebuilding: bool,
) -> None:
    reconstruction = Reconstruction(iter([]), LATEST) if rebuilding else None
    checker = LogChecker(reconstruction=reconstruction)
    position = checker.position
    assert checker.turns.position is position
    assert checker.opening.position is position
    assert checker.requests.position is position
    assert checker.requests.opening is checker.opening
    assert checker.requests.surface is checker.surface.surface
    assert checker.requests.reconstruction is reconstruction
    assert checker.turns.closing == checker.requests.closed
    assert checker.surface.explained == checker.opening.explained


def test_a_machines_callbacks_cannot_be_rewired_after_it_is_built() -> None:
    turns = TurnRules(Position())
    surface = SurfaceRules(derive=False)
    with pytest.raises(AttributeError):
        turns.closing = lambda step, line: ()  # type: ignore[misc]
    with pytest.raises(AttributeError):
        setattr(surface, "explained", lambda: None)  # noqa: B010

"""The checker's rule machines keep to what they own (issue 30).

Read from the source: each field of an open step is written by the one
machine its docstring names, the open turn and step (`Position`) by the
turn rules alone, and no machine is wired to another after it is built
(the driver hands collaborators to constructors, never assigns a method).
"""

from __future__ import annotations

import ast
from dataclasses import fields
from pathlib import Path

from reqfold.conformance.check import log_rules
from reqfold.conformance.check.turn_rules import OpenStep, Position

CHECK = Path(log_rules.__file__).resolve().parent

OWNERS = {
    "header_events": "opening_rules.py",
    "cache_warning": "opening_rules.py",
    "responded": "request_rules.py",
    "resolved": "request_rules.py",
    "boundary": "request_rules.py",
    "history_unknown": "request_rules.py",
}
"""The fields of `OpenStep` written after it is made, and the one module
that may write each (`TurnRules` makes it with the others)."""

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


def test_no_rule_machine_is_given_a_collaborator_after_it_is_built() -> None:
    source = ast.parse(Path(log_rules.__file__).read_text(encoding="utf-8"))
    wired = [
        ast.unparse(node)
        for node in ast.walk(source)
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Attribute)
        and isinstance(target.value, ast.Attribute)
        and target.value.attr in MACHINES
        and isinstance(node.value, ast.Attribute)  # a method or a machine
    ]
    assert wired == []

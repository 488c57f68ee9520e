"""The gallery of known-bad harnesses uses only the reference's documented seams.

A known-bad harness is the reference with one defect, written through a
public seam (docs/reference-harness.md, "Seams for known-bad variants"), so
a refactor of the loop's private state and helpers cannot break the
gallery. Here "private" is any name starting with one underscore: an
import of one from ``reqfold`` (or from a private module of it), an
attribute read or written through any object (``self._prefix``,
``loop._state``, ``adapter._frame``), the same by name
(``getattr(loop, "_state")``, ``setattr``, ``hasattr``, ``delattr``,
``vars(loop)["_state"]``, ``loop.__dict__["_state"]``), or a method or
attribute of that name defined in a class body (an override). Attributes of
standard library modules (``os._exit``) are not the reference's and stay
allowed. Every public method the gallery overrides in a reference class,
and every attribute of a reference module it rebinds, is a seam the docs
list.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import types
from pathlib import Path

import pytest

from reqfold.reference.loop import AgentLoop
from reqfold.reference.shells import harness_adapter

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
            module = node.module or ""
            if any(is_private(part) for part in module.split(".")):
                found.append(f"{node.lineno}: import {module}")
            found += [
                f"{node.lineno}: import {alias.name}"
                for alias in node.names
                if is_private(alias.name)
            ]
        elif isinstance(node, ast.Import):
            found += [
                f"{node.lineno}: import {alias.name}"
                for alias in node.names
                if alias.name.startswith("reqfold")
                and any(is_private(part) for part in alias.name.split("."))
            ]
        elif isinstance(node, ast.Attribute) and is_private(node.attr):
            owner = node.value
            if not (isinstance(owner, ast.Name) and owner.id in other_modules):
                found.append(f"{node.lineno}: .{node.attr}")
        elif isinstance(node, ast.Call) and (name := _private_by_name(node)):
            found.append(f"{node.lineno}: {name}")
        elif isinstance(node, ast.Subscript) and (key := _private_key(node)):
            found.append(f"{node.lineno}: [{key!r}]")
        elif isinstance(node, ast.ClassDef):
            found += [
                f"{item.lineno}: def {item.name}"
                for item in node.body
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
                and is_private(item.name)
            ]
            found += [
                f"{item.lineno}: {target.id} ="
                for item in node.body
                for target in _assigned(item)
                if isinstance(target, ast.Name) and is_private(target.id)
            ]
    return found


BY_NAME = frozenset({"getattr", "setattr", "hasattr", "delattr"})
"""The builtins that reach an attribute by a name given as a string."""


def _private_text(node: ast.expr) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value if is_private(node.value) else None
    return None


def _private_by_name(call: ast.Call) -> str | None:
    """``getattr(x, "_name")`` and its kin, as ``getattr('_name')``."""
    if (
        isinstance(call.func, ast.Name)
        and call.func.id in BY_NAME
        and len(call.args) >= 2
        and (name := _private_text(call.args[1]))
    ):
        return f"{call.func.id}({name!r})"
    return None


def _private_key(node: ast.Subscript) -> str | None:
    """``vars(x)["_name"]`` or ``x.__dict__["_name"]``: an attribute by key."""
    owner = node.value
    namespace = (
        isinstance(owner, ast.Call)
        and isinstance(owner.func, ast.Name)
        and owner.func.id == "vars"
    ) or (isinstance(owner, ast.Attribute) and owner.attr == "__dict__")
    return _private_text(node.slice) if namespace else None


def _assigned(statement: ast.stmt) -> list[ast.expr]:
    """The targets a statement assigns."""
    if isinstance(statement, ast.Assign):
        return list(statement.targets)
    if isinstance(statement, ast.AnnAssign | ast.AugAssign):
        return [statement.target]
    return []


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
        ("class Bad:\n    _prefix = None", "2: _prefix ="),
        ("class Bad:\n    _prefix: int = 0", "2: _prefix ="),
        ("getattr(loop, '_state')", "1: getattr('_state')"),
        ("setattr(loop, '_state', 1)", "1: setattr('_state')"),
        ("hasattr(loop, '_state')", "1: hasattr('_state')"),
        ("delattr(loop, '_state')", "1: delattr('_state')"),
        ("vars(loop)['_state'] = 1", "1: ['_state']"),
        ("loop.__dict__['_state']", "1: ['_state']"),
        (
            "from reqfold.reference._inner import x",
            "1: import reqfold.reference._inner",
        ),
        ("import reqfold.reference._inner", "1: import reqfold.reference._inner"),
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


def documented_seams() -> str:
    """The docs' section on seams for known-bad variants."""
    _, heading, section = DOCS.read_text(encoding="utf-8").partition(
        "\n## Seams for known-bad variants\n"
    )
    assert heading
    return section.split("\n## ")[0]


def reference_bases(tree: ast.Module) -> dict[str, type]:
    """The classes of the reference a harness imports by name."""
    found: dict[str, type] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
            "reqfold.reference"
        ):
            module = importlib.import_module(node.module or "")
            for alias in node.names:
                value = getattr(module, alias.name, None)
                if isinstance(value, type):
                    found[alias.asname or alias.name] = value
    return found


def reference_modules(tree: ast.Module) -> set[str]:
    """The names under which a harness imports modules of the reference."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
            "reqfold.reference"
        ):
            module = importlib.import_module(node.module or "")
            for alias in node.names:
                if isinstance(getattr(module, alias.name, None), types.ModuleType):
                    found.add(alias.asname or alias.name)
    return found


def gallery_seams(source: str) -> set[str]:
    """What a harness changes of the reference: ``Class.method`` for each
    public method it overrides in a reference class it subclasses, and
    ``module.name`` for each attribute of a reference module it rebinds."""
    tree = ast.parse(source)
    bases = reference_bases(tree)
    modules = reference_modules(tree)
    seams: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for base in node.bases:
                if not (isinstance(base, ast.Name) and base.id in bases):
                    continue
                reference = bases[base.id]
                seams.update(
                    f"{reference.__name__}.{item.name}"
                    for item in node.body
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
                    and not item.name.startswith("_")
                    and hasattr(reference, item.name)
                )
        elif isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            seams.update(
                f"{target.value.id}.{target.attr}"
                for target in _assigned(node)
                if isinstance(target, ast.Attribute)
                and isinstance(target.value, ast.Name)
                and target.value.id in modules
            )
    return seams


def protocol_methods() -> set[str]:
    """The ``HarnessServer`` methods that answer a protocol method (the docs
    say each is a seam)."""
    source = inspect.getsource(harness_adapter.HarnessServer)
    return set(re.findall(r'^\s+"[a-z]+/[a-zA-Z]+": self\.(\w+),$', source, re.M))


def is_documented(seam: str, section: str) -> bool:
    """Whether the seams section names `seam` (``Class.method`` as
    `method(` or `Class.method(`, ``module.name`` as itself)."""
    owner, _, name = seam.partition(".")
    if owner == "HarnessServer" and name in protocol_methods():
        return True
    return any(
        f"`{written}" in section for written in (f"{name}(", f"{seam}(", f"{seam}`")
    )


def test_every_seam_the_gallery_overrides_or_rebinds_is_documented() -> None:
    """A reference method a known-bad harness overrides, in any reference
    class, and a reference module's attribute it rebinds, is a seam the
    docs list."""
    section = documented_seams()
    seams = {
        seam
        for path in HARNESSES
        for seam in gallery_seams(path.read_text(encoding="utf-8"))
    }
    assert {seam.partition(".")[0] for seam in seams} >= {
        "AgentLoop",
        "HarnessServer",
        "ChatCompletionsClient",
        "harness_stdio",
    }
    undocumented = {seam for seam in seams if not is_documented(seam, section)}
    assert undocumented <= {"AgentLoop.dispose"}  # the loop's own public API


def test_an_override_of_any_reference_class_and_a_module_rebinding_are_seams() -> None:
    source = (
        "from reqfold.reference.loop import ChatCompletionsClient\n"
        "from reqfold.reference.shells import harness_stdio\n"
        "class C(ChatCompletionsClient):\n"
        "    def body_for(self, request): ...\n"
        "    def own_helper(self): ...\n"
        "harness_stdio.answer = None\n"
    )
    assert gallery_seams(source) == {
        "ChatCompletionsClient.body_for",
        "harness_stdio.answer",
    }
    assert not is_documented("ChatCompletionsClient.no_such_seam", "`body_for(`")


def seam_steps() -> dict[str, set[str]]:
    """The steps of `run_step` the docs' ``AgentLoop`` seam table gives
    each seam (its second column)."""
    rows = re.findall(
        r"^\| `(\w+)\([^|]*\| ([^|]*) \|", documented_seams(), re.MULTILINE
    )
    return {name: set(re.findall(r"\d+", steps)) for name, steps in rows}


def test_the_checkpoint_row_names_the_step_of_every_seam_that_checks_inside() -> None:
    """A seam that calls `checkpoint()` itself (`dispatch_request`, after the
    race with the provider call) is a step the checkpoint row lists."""
    steps = seam_steps()
    inside = [
        name
        for name in steps
        if name != "checkpoint"
        and "self.checkpoint()" in inspect.getsource(getattr(AgentLoop, name))
    ]
    assert "dispatch_request" in inside
    assert [name for name in inside if not steps[name] <= steps["checkpoint"]] == []

"""One result model: every part makes `Check`, and nothing reads facts back
out of a check's id, name or message (docs/glossary.md)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONFORMANCE = ROOT / "conformance"

STRING_READERS = frozenset(
    {"partition", "rpartition", "split", "rsplit", "startswith", "endswith"}
    | {"removeprefix", "removesuffix"}
)
"""String methods that take a text apart."""

READ_MEMBERS = frozenset({"id", "name", "message"})
"""The members of a check that are words to show, never facts to read."""

NOT_A_CHECK = frozenset(
    {
        # a directory entry's file name (a Path), not a check's
        "entry.name.endswith(SUFFIX)",
        # the log file's name (a Path), not a check's
        "shown.name.removesuffix('.jsonl')",
    }
)
"""Calls the search below finds whose receiver is no check, each with why."""

BEFORE_A_CHECK = frozenset({"conformance/harness/expectations.py:Judged"})
"""Shapes that are the step before a `Check`, not a result of their own:
an expectation kind's `Judged` is made into a `Check` by
`judge_expectation` alone, and never leaves that module's judge."""


def result_types(path: Path) -> list[str]:
    """Classes in `path` that declare both an ``outcome`` and ``rules`` field:
    a result of a check, in its own shape."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.ClassDef):
            continue
        fields = {
            item.target.id
            for item in node.body
            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
        }
        if "rules" in fields and fields & {"outcome", "ok"}:
            found.append(node.name)
    return found


def id_readers(path: Path) -> list[int]:
    """Lines of `path` that take an ``.id``, ``.name`` or ``.message`` apart,
    whatever holds it (``check.id.partition("/")``,
    ``f.id.startswith("gate/")``, ``x.message.removeprefix(...)``), but
    the calls `NOT_A_CHECK` names."""
    return [
        node.lineno
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in STRING_READERS
        and isinstance(node.func.value, ast.Attribute)
        and node.func.value.attr in READ_MEMBERS
        and ast.unparse(node) not in NOT_A_CHECK
    ]


def test_the_only_result_type_of_the_suite_is_check() -> None:
    found = {
        f"{path.relative_to(ROOT)}:{name}"
        for path in sorted(CONFORMANCE.rglob("*.py"))
        for name in result_types(path)
    }
    assert found == {"conformance/verdict.py:Check", *BEFORE_A_CHECK}


def test_no_module_takes_a_check_id_apart() -> None:
    found = {
        f"{path.relative_to(ROOT)}:{line}"
        for path in sorted(CONFORMANCE.rglob("*.py"))
        for line in id_readers(path)
    }
    assert found == set()


def test_both_checks_find_what_they_look_for(tmp_path: Path) -> None:
    """The checks above can fail: a second result type and an id taken
    apart are each found."""
    source = tmp_path / "bad.py"
    source.write_text(
        "class CaseResult:\n"
        "    rules: tuple[str, ...]\n"
        "    outcome: str\n"
        "class Judged:\n"
        "    rules: tuple[str, ...]\n"
        "    ok: bool\n"
        "def run_of(check):\n"
        "    return check.id.partition('/')[0]\n"
        "def gates(findings):\n"
        "    return [f for f in findings if f.id.startswith('gate/')]\n"
        "def reason(skip):\n"
        "    return skip.message.removeprefix('not covered: ')\n"
    )
    assert result_types(source) == ["CaseResult", "Judged"]
    assert sorted(id_readers(source)) == [8, 10, 12]

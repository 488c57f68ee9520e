"""One registry of dialects: each dialect is one row (its profile, which
carries its name, and what speaks it), every other list of dialects is
derived from the rows, and no other module of `fakes/` or `conformance/`
writes a name or imports a row's profile by name."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from reqfold import conformance, fakes
from reqfold.fakes import FakeProvider
from reqfold.fakes.dialects.openai_chat import WIRE as CHAT_COMPLETIONS
from reqfold.fakes.dialects.registry import (
    DEFAULT_DIALECT,
    DIALECT_NAMES,
    DIALECTS,
    PROFILES,
    REGISTRY,
    dialect_named,
    dialect_serving,
    get_profile,
    serving_name,
)
from reqfold.fakes.profiles import Profile
from reqfold.fakes.provider import served_paths

PACKAGE = Path(fakes.__file__).resolve().parent
CHECKS = Path(conformance.__file__).resolve().parent
REGISTRY_MODULE = PACKAGE / "dialects" / "registry.py"
ROW_PROFILES = frozenset({"DEEPSEEK", "OPENAI", "ANTHROPIC", "OPENAI_RESPONSES"})
"""The registry's constants that name one row's profile."""


def _name_literals(path: Path) -> list[tuple[int, str]]:
    """The string constants of `path` that are a dialect's name, docstrings
    left out (prose may name a dialect; code may not)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(
            node,
            ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef,
        )
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and node.value in DIALECT_NAMES
        and id(node) not in docstrings
    ]


def test_every_dialect_is_one_row_and_the_lookups_are_derived_from_the_rows() -> None:
    names = [row.name for row in REGISTRY]
    assert len(names) == len(set(names))
    assert list(DIALECT_NAMES) == names == list(PROFILES) == list(DIALECTS)
    assert names[0] == DEFAULT_DIALECT
    for row in REGISTRY:
        assert PROFILES[row.name] is row.profile is get_profile(row.name)
        assert DIALECTS[row.name] is row.speaks is dialect_named(row.name)


def _row_imports(path: Path) -> list[tuple[int, str]]:
    """The registry's per-row profile constants `path` imports."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        (node.lineno, alias.name)
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if alias.name in ROW_PROFILES
    ]


def test_no_module_of_the_fake_but_the_registry_writes_a_dialect_name() -> None:
    written = {
        str(path.relative_to(root)): found
        for root in (PACKAGE, CHECKS)
        for path in sorted(root.rglob("*.py"))
        if path != REGISTRY_MODULE and (found := _name_literals(path))
    }
    assert written == {}
    assert {value for _, value in _name_literals(REGISTRY_MODULE)} == set(DIALECT_NAMES)


def test_no_check_picks_a_row_by_importing_its_profile() -> None:
    imported = {
        str(path.relative_to(CHECKS)): found
        for path in sorted(CHECKS.rglob("*.py"))
        if (found := _row_imports(path))
    }
    assert imported == {}


def test_an_unknown_dialect_name_is_refused_with_the_known_names() -> None:
    known = ", ".join(sorted(DIALECT_NAMES))
    with pytest.raises(ValueError, match=f"unknown dialect 'nope'; known: {known}"):
        get_profile("nope")
    with pytest.raises(ValueError, match="unknown dialect 'nope'"):
        FakeProvider(
            Profile(
                dialect="nope",
                block_size=1,
                min_cacheable_tokens=0,
                withhold_last_token=False,
                ttl=None,
            )
        )


def test_each_provider_path_is_served_by_its_rows_and_named_by_them() -> None:
    for row in REGISTRY:
        for path in row.paths:
            serving = dialect_serving(path)
            assert serving is not None
            assert serving.wire == row.speaks.wire
            assert f"POST {path}" in served_paths(row.paths)
            sharing = [other.name for other in REGISTRY if path in other.paths]
            expected = row.name if len(sharing) == 1 else row.speaks.wire
            assert serving_name(path) == expected
    assert serving_name("/v1/chat/completions") == CHAT_COMPLETIONS
    assert serving_name("/v1/nothing") is None
    assert dialect_serving("/v1/responses") is DIALECTS["openai-responses"]


def test_the_served_paths_of_an_error_name_each_path_once() -> None:
    assert served_paths(("/v1/responses", "/responses", "/v1/responses")) == (
        "POST /v1/responses, POST /responses"
    )

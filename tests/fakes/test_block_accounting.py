"""The block-caching dialects account a request one way: `account_usage`
in `reqfold.fakes.dialects.base`, given each dialect's usage renderer, so
the accounting is written once (the answers' usage is tested per dialect in
test_openai_chat.py, test_responses.py and the HTTP tests)."""

from __future__ import annotations

import ast
from pathlib import Path

from reqfold.fakes.dialects import base

DIALECTS = Path(base.__file__).resolve().parent


def callers(function: str) -> set[str]:
    """The modules of `fakes/dialects/` that call `function` by name."""
    return {
        path.name
        for path in DIALECTS.glob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == function
    }


def test_block_caching_is_accounted_in_one_place() -> None:
    assert callers("account_blocks") == {"base.py"}
    assert callers("account_usage") == {"chat_dialect.py", "responses_dialect.py"}

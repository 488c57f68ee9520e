"""The deep vectors reach exactly the depth JSON-6 names (issue 28, item 3).

JSON-6 counts every object and array from the outermost value of a
protocol message; the vectors that show it (and those that hide a bad
value at the bottom of such nesting) must reach that depth as the runner
sends them, or an implementation that stops short of the rule passes.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from reqfold.conformance.codec.loading import load_cases
from reqfold.reference.json_values import JsonValue

SPEC = Path(__file__).resolve().parents[2] / "docs" / "spec.md"


def rule_depth() -> int:
    """The depth JSON-6 names, read from docs/spec.md."""
    text = SPEC.read_text(encoding="utf-8")
    found = re.search(
        r"\*\*`JSON-6`\*\*.*?accepts JSON nested up to\s+(\d+) levels", text, re.S
    )
    assert found, "JSON-6 names no depth"
    return int(found.group(1))


def depth(value: JsonValue) -> int:
    """How many objects and arrays nest at the deepest point of `value`."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, above = stack.pop()
        if isinstance(item, dict | list):
            children = item.values() if isinstance(item, dict) else item
            deepest = max(deepest, above + 1)
            stack.extend((child, above + 1) for child in children)
    return deepest


@pytest.mark.spec("JSON-6")
def test_the_deep_vectors_nest_as_deep_as_json_6_names_in_the_message_sent() -> None:
    wanted = rule_depth()
    deep = [case for case in load_cases() if "nested-" in case.id and "deep" in case.id]
    assert len(deep) == 4
    for case in deep:
        message = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": case.method,
            "params": case.params,
        }
        assert depth(message) == wanted, case.id
        if case.expect.get("result") is not None:
            answer = {"jsonrpc": "2.0", "id": 1, "result": case.expect["result"]}
            assert depth(answer) == wanted, case.id

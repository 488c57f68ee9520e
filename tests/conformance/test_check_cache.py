"""CACHE-2: the checker warns when the opening changes on consecutive requests."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.check import check_lines
from reference.jsonl import dump_line, make_storage_line
from reference.session_log import SessionLog

USER = {"kind": "user"}


def tool(name: str) -> dict[str, Any]:
    return {"name": name, "description": name, "parameters": {"type": "object"}}


def one_turn(header_events: list[tuple[str, dict[str, Any]]]) -> list[bytes]:
    """A turn with one step per header event, each step answered by text."""
    log = SessionLog()
    log.append("turn/start", {"turn": 1}, time=0)
    log.append(
        "user/message", {"content": [], "source": USER}, time=0, surface_op="append"
    )
    for step, (kind, data) in enumerate(header_events, start=1):
        log.append("step/start", {"turn": 1, "step": step}, time=0)
        log.append(kind, data, time=0)
        log.append(
            "assistant/message",
            {"turn": 1, "step": step, "content": []},
            time=0,
            surface_op="append",
        )
        log.append("step/end", {"turn": 1, "step": step}, time=0)
    log.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}}, time=0)
    storage = make_storage_line("s", 0, revision="session-prefix")
    return [dump_line(line).encode() for line in (storage, *log.events)]


def cache_warnings(lines: list[bytes]) -> list[tuple[int, str]]:
    report = check_lines(lines)
    return [(f.line, f.message) for f in report.findings if f.rule == "CACHE-2"]


M = {"model": "m"}
INITIAL = (
    "request/header",
    {"header": {"config": M, "tools": [tool("a"), tool("b")]}, "reason": "initial"},
)


@pytest.mark.spec("CACHE-2")
def test_tools_changed_by_a_delta_then_a_fallback_on_consecutive_steps_warn() -> None:
    add_c = {"tools": {"added": [tool("c")], "removed": [], "changed": []}}
    reorder = {
        "header": {"config": M, "tools": [tool("c"), tool("a"), tool("b")]},
        "reason": "fallback",
    }
    lines = one_turn(
        [INITIAL, ("request/header-delta", add_c), ("request/header", reorder)]
    )
    warnings = cache_warnings(lines)
    assert len(warnings) == 1
    assert warnings[0][1].startswith("tools changed on two consecutive requests")


@pytest.mark.spec("CACHE-2")
def test_changes_to_different_parts_or_to_the_config_do_not_warn() -> None:
    system = {"system": {"keepStart": 0, "keepEnd": 0, "insert": ["s"]}}
    config = {"config": {"model": "n"}}
    add_c = {"tools": {"added": [tool("c")], "removed": [], "changed": []}}
    assert (
        cache_warnings(
            one_turn(
                [
                    INITIAL,
                    ("request/header-delta", system),
                    ("request/header-delta", add_c),
                ]
            )
        )
        == []
    )
    assert (
        cache_warnings(
            one_turn(
                [
                    INITIAL,
                    ("request/header-delta", config),
                    ("request/header-delta", {"config": M}),
                ]
            )
        )
        == []
    )

"""CACHE-2: the checker warns when the opening changes on consecutive requests."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from reqfold.conformance.check import check_lines, read_captures
from reqfold.fakes import FakeProvider, FakeTransport, dump_captured_request
from reqfold.reference.loop import AgentLoop, ChatCompletionsClient, counter_clock
from reqfold.reference.session_log import SessionLog
from reqfold.reference.shells.jsonl import dump_line, make_storage_line

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


def turns(
    header_events: list[tuple[str, dict[str, Any]] | None],
    *,
    between: list[tuple[str, dict[str, Any], str | None]] | None = None,
) -> list[bytes]:
    """One turn of one step per item (None: a step that logs no header
    event); `between` events are appended after the second turn's step, so
    between its change to the opening and the third turn's."""
    log = SessionLog()
    for turn, header_event in enumerate(header_events, start=1):
        log.append("turn/start", {"turn": turn}, time=0)
        log.append(
            "user/message",
            {"content": [{"type": "text", "text": f"q{turn}"}], "source": USER},
            time=0,
            surface_op="append",
        )
        log.append("step/start", {"turn": turn, "step": 1}, time=0)
        if header_event is not None:
            log.append(*header_event, time=0)
        log.append(
            "assistant/message",
            {"turn": turn, "step": 1, "content": [{"type": "text", "text": "a"}]},
            time=0,
            surface_op="append",
        )
        log.append("step/end", {"turn": turn, "step": 1}, time=0)
        if turn == 2 and between:
            for kind, data, op in between:
                if op == "replace":
                    start = log.events[1]["seq"]
                    end = log.events[-2]["seq"]
                    log.append(
                        kind,
                        data,
                        time=0,
                        surface_op={"op": "replace", "start": start, "end": end},
                        source_event_seqs=list(range(start, end + 1)),
                    )
                else:
                    log.append(kind, data, time=0)
        log.append("turn/end", {"turn": turn, "reason": {"kind": "completed"}}, time=0)
    storage = make_storage_line("s", 0, revision="session-prefix")
    return [dump_line(line).encode() for line in (storage, *log.events)]


def clock(minute: int) -> tuple[str, dict[str, Any]]:
    """A delta that changes the clock line at the end of the system prompt."""
    return (
        "request/header-delta",
        {"system": {"keepStart": 1, "keepEnd": 0, "insert": [f"Now: 10:{minute:02}"]}},
    )


CLOCK_INITIAL = (
    "request/header",
    {"header": {"config": M, "system": "Be brief.\nNow: 10:00"}, "reason": "initial"},
)


@pytest.mark.spec("CACHE-2")
def test_a_clock_in_the_system_prompt_warns_across_turns_of_one_request_each() -> None:
    warnings = cache_warnings(turns([CLOCK_INITIAL, clock(1), clock(2)]))
    assert len(warnings) == 1
    assert warnings[0][1].startswith(
        "system changed on two consecutive requests (turn 2 step 1, then turn 3 step 1)"
    )


@pytest.mark.spec("CACHE-2")
def test_one_change_per_turn_with_a_stable_request_between_does_not_warn() -> None:
    assert cache_warnings(turns([CLOCK_INITIAL, clock(1), None, clock(2)])) == []


@pytest.mark.spec("CACHE-2")
def test_edits_in_different_places_on_consecutive_turns_do_not_warn() -> None:
    add_line = (
        "request/header-delta",
        {"system": {"keepStart": 2, "keepEnd": 0, "insert": ["Be kind."]}},
    )
    reword = (
        "request/header-delta",
        {"system": {"keepStart": 0, "keepEnd": 2, "insert": ["Be terse."]}},
    )
    assert cache_warnings(turns([CLOCK_INITIAL, add_line, reword])) == []


@pytest.mark.spec("CACHE-2")
def test_a_change_a_compaction_explains_does_not_warn() -> None:
    summary = (  # a surface replace: the history is rewritten
        "user/message",
        {
            "content": [{"type": "text", "text": "<summary>q1</summary>"}],
            "source": USER,
        },
        "replace",
    )
    assert (
        cache_warnings(turns([CLOCK_INITIAL, clock(1), clock(2)], between=[summary]))
        == []
    )
    marker = ("compact/start", {}, None)
    lines = turns([CLOCK_INITIAL, clock(1), clock(2)], between=[marker])
    assert cache_warnings(lines) == []


@pytest.mark.spec("CACHE-2")
def test_a_new_instance_explains_a_change_of_the_opening() -> None:
    resume = (
        "request/header",
        {
            "header": {"config": M, "system": "Be brief.\nNow: 10:01"},
            "reason": "resume",
        },
    )
    assert cache_warnings(turns([CLOCK_INITIAL, clock(1), resume])) == []
    assert cache_warnings(turns([CLOCK_INITIAL, resume, clock(2)])) == []


async def clock_in_the_system_prompt(fake: FakeProvider, sends: int) -> AgentLoop:
    """A reference loop whose harness writes the time into the system prompt
    before every send (the defect CACHE-2 warns of), one request per turn."""
    client = ChatCompletionsClient(
        base_url="http://fake.test", transport=FakeTransport(fake)
    )
    tick = counter_clock()
    base = "You are a careful assistant.\n" + "Answer briefly and exactly.\n" * 40
    loop = AgentLoop(provider=client, model="deepseek-chat", system=base, clock=tick)
    try:
        for number in range(sends):
            loop.system = f"{base}Now: {tick()} ms."
            await loop.send(f"question {number}")
    finally:
        await client.aclose()
    return loop


@pytest.mark.spec("CACHE-2")
def test_a_reference_run_with_a_clock_warns_and_shows_the_cache_cost() -> None:
    fake = FakeProvider()
    loop = asyncio.run(clock_in_the_system_prompt(fake, 3))
    storage = make_storage_line("s", 0, revision="session-prefix")
    lines = [dump_line(storage).encode()]
    lines += [dump_line(event).encode() for event in loop.session]
    captures = [
        json.dumps(dump_captured_request(record)).encode() for record in fake.requests
    ]
    report = check_lines(lines, captures=read_captures(captures))
    [warning] = [f for f in report.findings if f.rule == "CACHE-2"]
    assert [f for f in report.findings if f.rule != "CACHE-2"] == []
    assert warning.level == "SHOULD"
    assert "turn 2 step 1, then turn 3 step 1" in warning.message
    usage = fake.requests[2].usage
    assert usage is not None
    prompt, cached = usage["prompt_tokens"], usage["prompt_cache_hit_tokens"]
    assert cached < prompt
    assert f"The provider cached {cached:,} of {prompt:,} prompt tokens" in (
        warning.message
    )
    # without the capture the warning stands, without a cost
    [alone] = [f for f in check_lines(lines).findings if f.rule == "CACHE-2"]
    assert "cached" not in alone.message

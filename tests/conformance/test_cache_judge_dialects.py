"""The cache judgement of requests in the Responses dialect (Codex's), in
process: requests sent to the fake through its transport, judged alone."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from reqfold.conformance.cache import (
    cache_status,
    judge_cache,
    read_capture_lines,
)
from reqfold.conformance.outcomes import Outcome
from reqfold.fakes import (
    FakeProvider,
    FakeTransport,
    Reply,
    ToolCall,
    dump_capture_jsonl,
)

INSTRUCTIONS = "You are a careful coding agent. " * 120
TOOLS = [
    {"type": "function", "name": name, "parameters": {"type": "object"}}
    for name in ("read", "write")
]


class ResponsesSession:
    """A harness that resends its whole conversation (store false)."""

    def __init__(self) -> None:
        self.provider = FakeProvider("openai-responses")
        self.client = httpx.Client(
            transport=FakeTransport(self.provider), base_url="http://fake/v1"
        )
        self.items: list[Any] = [
            {"role": "developer", "content": "Work in /repo."},
        ]

    def turn(self, text: str) -> None:
        self.items.append({"role": "user", "content": text + " word" * 60})
        answer = self.client.post(
            "/responses",
            json={
                "model": "gpt-5",
                "instructions": INSTRUCTIONS,
                "tools": TOOLS,
                "input": self.items,
                "store": False,
                "prompt_cache_key": "session-1",
                "reasoning": {"effort": "low"},
            },
        ).json()
        self.items.extend(answer["output"])

    def lines(self) -> list[str]:
        return dump_capture_jsonl(self.provider.capture).splitlines()


@pytest.mark.spec("CACHE-1")
def test_a_responses_session_that_only_appends_is_conformant_with_its_cache_read() -> (
    None
):
    session = ResponsesSession()
    for n in range(3):
        session.turn(f"turn {n}")
    judgement = judge_cache(read_capture_lines(iter(session.lines())))
    assert [row.relation for row in judgement.rows] == ["first", "append", "append"]
    assert judgement.breaks == []
    assert (
        [row.cached for row in judgement.rows][1:]
        == [
            r.usage["input_tokens_details"]["cached_tokens"]  # type: ignore[index]
            for r in session.provider.requests[1:]
        ]
    )
    assert all(row.cached for row in judgement.rows[1:])
    assert cache_status(judgement) == 0


@pytest.mark.spec("CACHE-1")
def test_a_responses_session_that_rewrites_an_item_breaks_the_cache() -> None:
    session = ResponsesSession()
    for n in range(3):
        session.turn(f"turn {n}")
    session.items[1] = {"role": "user", "content": "rewritten"}
    session.turn("turn 3")
    judgement = judge_cache(read_capture_lines(iter(session.lines())))
    (broken,) = judgement.breaks
    assert broken.index == 3
    assert broken.lost > 0
    assert cache_status(judgement) == 1


@pytest.mark.spec("STREAM-4")
def test_a_function_call_echoed_with_other_argument_bytes_is_an_echo_warning() -> None:
    session = ResponsesSession()
    session.provider.push(
        Reply(reasoning="look", tool_calls=(ToolCall.of("read", {"path": "a"}),)),
        Reply(text="done"),
    )
    session.turn("read a")
    call = next(i for i in session.items if i.get("type") == "function_call")
    faithful = judge_cache(read_capture_lines(iter(session.lines())))
    assert faithful.echoes == []
    call["arguments"] = '{"path": "a"}'
    session.items.append(
        {"type": "function_call_output", "call_id": call["call_id"], "output": "x"}
    )
    session.turn("and then?")
    judgement = judge_cache(read_capture_lines(iter(session.lines())))
    (echo,) = judgement.echoes
    assert echo.index == 1
    assert echo.field.endswith(".arguments")
    assert echo.returned == '{"path":"a"}'
    finding = next(f for f in judgement.findings if f.id == "cache/echo-fidelity")
    assert finding.outcome is Outcome.WARN

"""``reqfold check LOG --requests CAPTURE`` on a capture in another dialect.

The log rebuilds chat-completions requests only (docs/spec.md section 12):
the requests of a harness that spoke Anthropic Messages or the Responses
API are not compared with it, and saying "the capture holds no more"
(CHECK-1) of them would be a false verdict. The captures here are real:
the session's requests, written in each dialect, sent over HTTP to the
fake on 127.0.0.1 and read back from ``GET /_fake/requests.jsonl``.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest
from cli_in_process import reqfold_here

from reqfold.conformance.check import check_lines, read_captures
from reqfold.conformance.check.capture_dialect import (
    ANTHROPIC,
    CHAT,
    RESPONSES,
    body_dialect,
    path_dialect,
)
from reqfold.fakes import FakeProvider
from reqfold.fakes.server import running_server

FIXTURES = Path(__file__).parent / "check_fixtures"
LOG = FIXTURES / "valid" / "session-prefix.jsonl"
CHAT_CAPTURE = FIXTURES / "requests" / "session-prefix.capture.jsonl"
TAMPERED = FIXTURES / "requests" / "session-prefix.tampered-message.capture.jsonl"


def chat_bodies() -> list[dict[str, Any]]:
    """The four chat-completions requests the fixture log's session sent."""
    lines = CHAT_CAPTURE.read_text().splitlines()
    return [json.loads(line)["body"] for line in lines]


def anthropic_body(chat: dict[str, Any]) -> dict[str, Any]:
    """The same request as the Messages API takes it."""
    messages: list[dict[str, Any]] = []
    system = ""
    for message in chat["messages"]:
        role = message["role"]
        if role == "system":
            system = message["content"]
        elif role == "tool":
            block = {
                "type": "tool_result",
                "tool_use_id": message["tool_call_id"],
                "content": message["content"],
            }
            messages.append({"role": "user", "content": [block]})
        elif message.get("tool_calls"):
            text = {"type": "text", "text": message["content"]}
            blocks: list[dict[str, Any]] = [text]
            blocks += [
                {
                    "type": "tool_use",
                    "id": call["id"],
                    "name": call["function"]["name"],
                    "input": json.loads(call["function"]["arguments"]),
                }
                for call in message["tool_calls"]
            ]
            messages.append({"role": "assistant", "content": blocks})
        else:
            messages.append({"role": role, "content": message["content"]})
    tools = [
        {
            "name": tool["function"]["name"],
            "description": tool["function"]["description"],
            "input_schema": tool["function"]["parameters"],
        }
        for tool in chat["tools"]
    ]
    return {
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "system": system,
        "tools": tools,
        "messages": messages,
    }


def responses_body(chat: dict[str, Any]) -> dict[str, Any]:
    """The same request as the Responses API takes it (nothing stored)."""
    items: list[dict[str, Any]] = []
    instructions = ""
    for message in chat["messages"]:
        role = message["role"]
        if role == "system":
            instructions = message["content"]
        elif role == "tool":
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": message["tool_call_id"],
                    "output": message["content"],
                }
            )
        else:
            items.append({"role": role, "content": message["content"]})
            items += [
                {
                    "type": "function_call",
                    "call_id": call["id"],
                    "name": call["function"]["name"],
                    "arguments": call["function"]["arguments"],
                }
                for call in message.get("tool_calls", [])
            ]
    tools = [{"type": "function", **tool["function"]} for tool in chat["tools"]]
    return {
        "model": "gpt-5",
        "instructions": instructions,
        "tools": tools,
        "input": items,
        "store": False,
    }


DIALECTS = {
    ANTHROPIC: ("/v1/messages", anthropic_body),
    RESPONSES: ("/v1/responses", responses_body),
}


def real_capture(dialect: str, tmp_path: Path) -> Path:
    """The session's requests sent in `dialect` to the fake over HTTP; its
    capture, as ``GET /_fake/requests.jsonl`` gives it, in a file."""
    path, translate = DIALECTS[dialect]
    with running_server(FakeProvider(dialect)) as url, httpx.Client() as client:
        for chat in chat_bodies():
            answer = client.post(url + path, json=translate(chat))
            assert answer.status_code == 200, answer.text
        capture = client.get(url + "/_fake/requests.jsonl").content
    saved = tmp_path / f"{dialect}.capture.jsonl"
    saved.write_bytes(capture)
    return saved


@pytest.mark.slow
@pytest.mark.parametrize("dialect", [ANTHROPIC, RESPONSES])
@pytest.mark.spec("CHECK-1", "REQ-1")
def test_a_real_capture_in_another_dialect_is_not_compared_and_fails_nothing(
    dialect: str, tmp_path: Path
) -> None:
    capture = real_capture(dialect, tmp_path)
    status, out, _ = reqfold_here("check", str(LOG), "--requests", str(capture))
    assert status == 0, out
    assert ": CONFORMANT:" in out
    assert "capture holds no more" not in out
    assert f"(4 in the {dialect} dialect)" in out
    assert "so none was compared with it" in out
    assert "4 steps dispatched a request" in out
    status, out, _ = reqfold_here(
        "check", str(LOG), "--requests", str(capture), "--format", "json"
    )
    assert status == 0
    [report] = [json.loads(line) for line in out.splitlines()]
    assert report["outcome"] == "pass"
    assert report["requests_uncompared"] == {dialect: 4}
    assert report["requests_matched"] == 0


@pytest.mark.slow
@pytest.mark.spec("REQ-1", "CHECK-1")
def test_a_differing_chat_request_still_fails_beside_requests_in_another_dialect(
    tmp_path: Path,
) -> None:
    other = real_capture(ANTHROPIC, tmp_path).read_bytes()
    mixed = tmp_path / "mixed.capture.jsonl"
    mixed.write_bytes(other + TAMPERED.read_bytes())
    status, out, _ = reqfold_here("check", str(LOG), "--requests", str(mixed))
    assert status == 1, out
    assert "MUST [REQ-1]" in out
    assert "messages[6].content" in out
    assert "4 in the anthropic dialect not compared with the log" in out
    assert "its chat-completions requests were" in out
    assert "4 steps dispatched, 4 matched to captured requests" in out


@pytest.mark.spec("CHECK-1")
def test_a_chat_capture_short_of_the_log_still_fails_check_1() -> None:
    lines = CHAT_CAPTURE.read_bytes().splitlines(keepends=True)
    other = json.dumps({"index": 9, "path": "/v1/messages", "body": {}}).encode()
    uncompared: Counter[str] = Counter()
    report = check_lines(
        LOG.read_bytes().splitlines(keepends=True),
        captures=read_captures([*lines[:3], other + b"\n"], None, uncompared),
        uncompared=uncompared,
    )
    [finding] = report.findings
    assert finding.rule == "CHECK-1"
    assert "the capture holds no more" in finding.message
    assert uncompared == {ANTHROPIC: 1}


@pytest.mark.spec("CHECK-1")
def test_bare_bodies_in_another_dialect_are_recognised_by_their_shape() -> None:
    bodies = [anthropic_body(b) for b in chat_bodies()]
    bodies[0] = responses_body(chat_bodies()[0])
    uncompared: Counter[str] = Counter()
    report = check_lines(
        LOG.read_bytes().splitlines(keepends=True),
        captures=read_captures(
            [json.dumps(body).encode() + b"\n" for body in bodies], None, uncompared
        ),
        uncompared=uncompared,
    )
    assert report.findings == []
    assert uncompared == {ANTHROPIC: 3, RESPONSES: 1}
    assert not report.summary.reconstructing


def test_a_request_is_placed_in_its_dialect_by_path_then_body() -> None:
    assert path_dialect("/v1/chat/completions") == CHAT
    assert path_dialect("/anthropic/v1/messages") == ANTHROPIC
    assert path_dialect("/v1/responses") == RESPONSES
    assert path_dialect("/v1/models") is None
    chat = chat_bodies()[1]
    assert body_dialect(chat) == CHAT
    assert body_dialect(anthropic_body(chat)) == ANTHROPIC
    assert body_dialect(responses_body(chat)) == RESPONSES
    minimal = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    assert body_dialect(minimal) == CHAT  # no mark of another: still compared

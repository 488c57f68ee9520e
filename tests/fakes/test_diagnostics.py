"""The per-request diagnostic: relation, divergence and echo checks."""

from __future__ import annotations

import json

import httpx
import pytest

from reqfold.fakes import FakeProvider, FakeTransport, HttpRequest, Reply, ToolCall
from reqfold.fakes.diagnostics import common_prefix, describe_divergence
from reqfold.fakes.prompt import Segment

SYSTEM = {"role": "system", "content": "You are a careful coding agent. " * 20}


@pytest.fixture
def send(deepseek):
    client = httpx.Client(transport=FakeTransport(deepseek), base_url="http://f")

    def post(messages):
        client.post(
            "/chat/completions", json={"model": "deepseek-chat", "messages": messages}
        )
        return deepseek.last_request

    yield post
    client.close()


def test_first_request_has_no_closest_request(send):
    diagnostic = send([SYSTEM, {"role": "user", "content": "hi"}]).diagnostic
    assert diagnostic["relation"] == "first"
    assert diagnostic["closest_request"] is None
    assert diagnostic["uncached_tokens"] == diagnostic["prompt_tokens"]


def test_a_volatile_timestamp_in_the_system_prompt_is_named_with_an_excerpt(send):
    send(
        [
            {"role": "system", "content": "Now: 2026-01-01T10:00:00Z. Be careful."},
            {"role": "user", "content": "hi"},
        ]
    )
    diagnostic = send(
        [
            {"role": "system", "content": "Now: 2026-01-01T10:05:00Z. Be careful."},
            {"role": "user", "content": "hi"},
        ]
    ).diagnostic
    assert diagnostic["relation"] == "diverged"
    assert diagnostic["closest_request"] == 0
    divergence = diagnostic["divergence"]
    assert divergence == {
        "segment": "messages[0]",
        "message_index": 0,
        "field": "messages[0].content",
        "char_offset": 20,
        "segment_token_offset": 0,
        "earlier": "Now: 2026-01-01T10:00:00Z. Be careful.",
        "current": "Now: 2026-01-01T10:05:00Z. Be careful.",
    }


def test_the_closest_request_is_the_one_sharing_the_most_segments(send):
    base = [SYSTEM, {"role": "user", "content": "one"}]
    send(base)  # 0
    send([SYSTEM, {"role": "user", "content": "other"}])  # 1
    longer = [
        *base,
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "two"},
    ]
    send(longer)  # 2: extends 0
    diagnostic = send([*longer[:3], {"role": "user", "content": "three"}]).diagnostic
    assert diagnostic["closest_request"] == 2
    assert diagnostic["divergence"]["field"] == "messages[3].content"


def test_an_append_that_echoes_the_reply_exactly_reports_no_echo_divergence(
    send, deepseek
):
    deepseek.push(
        Reply(text="", reasoning="r", tool_calls=(ToolCall.of("ls", {"d": 1}),))
    )
    first = send([SYSTEM, {"role": "user", "content": "go"}])
    echoed = first.reply
    diagnostic = send(
        [
            SYSTEM,
            {"role": "user", "content": "go"},
            echoed,
            {
                "role": "tool",
                "tool_call_id": echoed["tool_calls"][0]["id"],
                "content": "a.py",
            },
        ]
    ).diagnostic
    assert diagnostic["relation"] == "append"
    assert diagnostic["echo_divergence"] is None


def test_an_echo_with_re_serialized_arguments_is_reported(send, deepseek):
    deepseek.push(
        Reply(tool_calls=(ToolCall(name="ls", arguments='{"d": 1}', id="call_1"),))
    )
    send([SYSTEM, {"role": "user", "content": "go"}])
    mangled = {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "ls", "arguments": '{"d":1}'},
            }
        ],
    }
    diagnostic = send(
        [
            SYSTEM,
            {"role": "user", "content": "go"},
            mangled,
            {"role": "tool", "tool_call_id": "call_1", "content": "x"},
        ]
    ).diagnostic
    echo = diagnostic["echo_divergence"]
    assert echo["field"] == "messages[2].tool_calls[0].function.arguments"
    assert echo["char_offset"] == 5
    assert (echo["earlier"], echo["current"]) == ('{"d": 1}', '{"d":1}')


def test_an_echo_may_send_null_content_for_an_empty_turn(send, deepseek):
    deepseek.push(Reply(tool_calls=(ToolCall(name="ls", id="c"),)))
    send([SYSTEM, {"role": "user", "content": "go"}])
    echo = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c",
                "type": "function",
                "function": {"name": "ls", "arguments": "{}"},
            }
        ],
    }
    diagnostic = send(
        [
            SYSTEM,
            {"role": "user", "content": "go"},
            echo,
            {"role": "tool", "tool_call_id": "c", "content": "x"},
        ]
    ).diagnostic
    assert diagnostic["echo_divergence"] is None


def test_excerpts_are_short_and_marked_when_cut():
    long = "a" * 100 + "X" + "b" * 100
    other = "a" * 100 + "Y" + "b" * 100
    divergence = describe_divergence(
        Segment(path="system", message_index=None, value=long, verbatim=True),
        Segment(path="system", message_index=None, value=other, verbatim=True),
        7,
    )
    assert divergence["char_offset"] == 100
    assert divergence["earlier"].startswith("…")
    assert divergence["earlier"].endswith("…")
    assert "X" in divergence["earlier"]
    assert "Y" in divergence["current"]
    assert len(divergence["earlier"]) < 70
    assert divergence["segment_token_offset"] == 7


def test_lost_tokens_count_shared_content_the_cache_no_longer_holds():
    provider = FakeProvider("deepseek", ttl=10)
    with httpx.Client(transport=FakeTransport(provider), base_url="http://f") as client:
        body = {
            "model": "deepseek-chat",
            "messages": [SYSTEM, {"role": "user", "content": "hi"}],
        }
        client.post("/chat/completions", json=body)
        provider.advance(11)
        client.post("/chat/completions", json=body)
    diagnostic = provider.last_request.diagnostic
    assert diagnostic["cached_tokens"] == 0
    assert diagnostic["lost_tokens"] == ((diagnostic["prompt_tokens"] - 1) // 64) * 64


def test_a_string_content_against_its_one_text_part_is_named_a_shape_change() -> None:
    provider = FakeProvider("deepseek")
    system = {"role": "system", "content": "You are terse. " * 40}

    def send(content: object) -> None:
        body = {
            "model": "deepseek-chat",
            "messages": [system, {"role": "user", "content": content}],
        }
        provider.handle(
            HttpRequest(
                method="POST", path="/chat/completions", body=json.dumps(body).encode()
            )
        )

    send("hello")
    send([{"type": "text", "text": "hello"}])
    send("hellO")
    shape, other = (r.diagnostic["divergence"] for r in provider.requests[1:])
    assert shape["field"] == "messages[1].content"
    assert shape["cause"] == "content shape"
    assert "cause" not in other


@pytest.mark.parametrize(
    ("a", "b", "length"),
    [
        ("", "abc", 0),
        ("abc", "abd", 2),
        ("abc", "abc", 3),
        (b"\x00\x01\x02", b"\x00\x01", 2),
        (b"\x05", b"\x06", 0),
    ],
)
def test_one_common_prefix_measures_text_and_packed_tokens(
    a: str | bytes, b: str | bytes, length: int
) -> None:
    assert common_prefix(a, b) == length  # type: ignore[type-var]

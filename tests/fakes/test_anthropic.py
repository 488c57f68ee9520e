"""Anthropic messages: breakpoints, usage split, TTL and the event stream."""

from __future__ import annotations

import httpx
import pytest

from reqfold.fakes import FakeProvider, FakeTransport, Reply, ToolCall, count_tokens

BOOK = " ".join(["word"] * 3000)
QUESTION = "What is the first word of the book?"
EPHEMERAL = {"type": "ephemeral"}


def body_with(system, messages=None, **fields):
    return {
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "system": system,
        "messages": messages or [{"role": "user", "content": QUESTION}],
        **fields,
    }


@pytest.fixture
def messages(anthropic):
    with httpx.Client(
        transport=FakeTransport(anthropic),
        base_url="https://api.anthropic.com",
        headers={"x-api-key": "sk-ant-test", "anthropic-version": "2023-06-01"},
    ) as client:

        def send(body):
            return client.post("/v1/messages", json=body)

        yield send


def cached_book():
    return [{"type": "text", "text": BOOK, "cache_control": EPHEMERAL}]


def test_cached_system_prompt_is_written_once_then_read(messages):
    """The docs' book example: creation then read, same small input both times."""
    system_tokens = 1 + count_tokens(
        "system:" + '{"type":"text","text":"' + BOOK + '"}'
    )
    # A string content is shorthand for one text block, and renders as one.
    question_tokens = 1 + count_tokens(
        "user:" + '{"type":"text","text":"' + QUESTION + '"}'
    )
    first = messages(body_with(cached_book())).json()["usage"]
    assert first == {
        "input_tokens": question_tokens,
        "cache_creation_input_tokens": system_tokens,
        "cache_read_input_tokens": 0,
        "cache_creation": {
            "ephemeral_5m_input_tokens": system_tokens,
            "ephemeral_1h_input_tokens": 0,
        },
        "output_tokens": 1,
    }
    second = messages(body_with(cached_book())).json()["usage"]
    assert second["cache_creation_input_tokens"] == 0
    assert second["cache_read_input_tokens"] == system_tokens
    assert second["input_tokens"] == question_tokens


def test_prefixes_under_the_model_minimum_are_not_cached(messages):
    short = [{"type": "text", "text": "tiny", "cache_control": EPHEMERAL}]
    messages(body_with(short))
    usage = messages(body_with(short)).json()["usage"]
    assert usage["cache_creation_input_tokens"] == usage["cache_read_input_tokens"] == 0


def test_more_than_four_breakpoints_get_the_real_400(messages):
    blocks = [
        {"type": "text", "text": f"part {k}", "cache_control": EPHEMERAL}
        for k in range(5)
    ]
    response = messages(body_with(blocks))
    assert response.status_code == 400
    assert response.json() == {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": "A maximum of 4 blocks with cache_control may be provided. "
            "Found 5.",
        },
    }


def test_a_one_hour_breakpoint_after_a_five_minute_one_is_rejected(messages):
    blocks = [
        {"type": "text", "text": "a", "cache_control": EPHEMERAL},
        {
            "type": "text",
            "text": "b",
            "cache_control": {"type": "ephemeral", "ttl": "1h"},
        },
    ]
    assert messages(body_with(blocks)).status_code == 400


def test_mixed_ttls_split_the_write_between_one_hour_and_five_minutes(messages):
    blocks = [
        {
            "type": "text",
            "text": BOOK,
            "cache_control": {"type": "ephemeral", "ttl": "1h"},
        },
        {"type": "text", "text": BOOK + " more", "cache_control": EPHEMERAL},
    ]
    usage = messages(body_with(blocks)).json()["usage"]
    split = usage["cache_creation"]
    assert split["ephemeral_1h_input_tokens"] > 0
    assert split["ephemeral_5m_input_tokens"] > 0
    assert sum(split.values()) == usage["cache_creation_input_tokens"]


def test_five_minute_entries_expire_unless_refreshed_by_a_hit(anthropic, messages):
    body = body_with(cached_book())
    messages(body)
    anthropic.advance(4 * 60)
    assert messages(body).json()["usage"]["cache_read_input_tokens"] > 0  # refreshes
    anthropic.advance(4 * 60)
    assert messages(body).json()["usage"]["cache_read_input_tokens"] > 0
    anthropic.advance(6 * 60)
    usage = messages(body).json()["usage"]
    assert usage["cache_read_input_tokens"] == 0
    assert usage["cache_creation_input_tokens"] > 0


def test_a_growing_conversation_reads_the_previous_breakpoint_through_lookback(
    messages,
):
    history = [
        {
            "role": "user",
            "content": [{"type": "text", "text": BOOK, "cache_control": EPHEMERAL}],
        }
    ]
    first = messages(body_with("sys", history)).json()["usage"]
    grown = [
        {"role": "user", "content": [{"type": "text", "text": BOOK}]},
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
        {
            "role": "user",
            "content": [{"type": "text", "text": "next", "cache_control": EPHEMERAL}],
        },
    ]
    second = messages(body_with("sys", grown)).json()["usage"]
    assert second["cache_read_input_tokens"] == first["cache_creation_input_tokens"]
    assert second["cache_creation_input_tokens"] > 0
    assert second["input_tokens"] == 0


def test_changing_tool_choice_keeps_tools_and_system_but_not_messages(messages):
    tools = [{"name": "ls", "input_schema": {"type": "object"}}]
    system = [{"type": "text", "text": BOOK, "cache_control": EPHEMERAL}]
    turn = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": BOOK + " q", "cache_control": EPHEMERAL}
            ],
        }
    ]
    messages(body_with(system, turn, tools=tools, tool_choice={"type": "auto"}))
    usage = messages(
        body_with(system, turn, tools=tools, tool_choice={"type": "any"})
    ).json()["usage"]
    system_read = usage["cache_read_input_tokens"]
    assert system_read > 0
    assert usage["cache_creation_input_tokens"] > 0  # the messages level is rewritten


def test_top_level_cache_control_places_the_breakpoint_on_the_last_block(messages):
    body = body_with(BOOK, cache_control=EPHEMERAL)
    first = messages(body).json()["usage"]
    assert first["input_tokens"] == 0
    second = messages(body).json()["usage"]
    assert second["cache_read_input_tokens"] == first["cache_creation_input_tokens"]


def test_stream_follows_the_message_event_sequence(anthropic, messages, sse):
    anthropic.push(
        Reply(
            text="Let me look.",
            reasoning="thinking hard",
            tool_calls=(ToolCall(name="ls", arguments='{"dir": "src"}'),),
        )
    )
    response = messages(body_with(cached_book(), stream=True))
    import json

    events = [(name, json.loads(data)) for name, data in sse(response.text)]
    names = [name for name, _ in events]
    assert names[0] == "message_start"
    assert names[1] == "ping"
    assert names[-2:] == ["message_delta", "message_stop"]
    assert "[DONE]" not in response.text
    start = events[0][1]["message"]
    assert start["usage"]["cache_creation_input_tokens"] > 0
    assert start["usage"]["output_tokens"] == 1
    starts = [
        p["content_block"]["type"] for n, p in events if n == "content_block_start"
    ]
    assert starts == ["thinking", "text", "tool_use"]
    partial = "".join(
        p["delta"]["partial_json"]
        for n, p in events
        if n == "content_block_delta" and p["delta"]["type"] == "input_json_delta"
    )
    assert partial == '{"dir": "src"}'
    delta = events[-2][1]
    assert delta["delta"]["stop_reason"] == "tool_use"
    assert (
        delta["usage"]["output_tokens"] == anthropic.last_request.usage["output_tokens"]
    )


def test_non_streaming_message_has_blocks_and_stop_reason(anthropic, messages):
    anthropic.push(Reply(tool_calls=(ToolCall.of("ls", {"dir": "."}, id="toolu_1"),)))
    body = messages(body_with("s")).json()
    assert body["type"] == "message"
    assert body["stop_reason"] == "tool_use"
    assert body["content"] == [
        {"type": "tool_use", "id": "toolu_1", "name": "ls", "input": {"dir": "."}}
    ]


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        ({"max_tokens": None}, "max_tokens"),
        ({"messages": []}, "at least one message"),
        ({"messages": [{"role": "system", "content": "x"}]}, "role"),
        ({"system": 5}, "system"),
        (
            {"messages": [{"role": "user", "content": [{"type": "text"}]}]},
            "messages.0.content.0.text",
        ),
        (
            {
                "messages": [
                    {
                        "role": "user",
                        "content": [
                            {
                                "type": "text",
                                "text": "x",
                                "cache_control": {"type": "persistent"},
                            }
                        ],
                    }
                ]
            },
            "ephemeral",
        ),
    ],
)
def test_bad_messages_requests_get_anthropic_shaped_400(messages, patch, message):
    body = {**body_with("s"), **patch}
    body = {k: v for k, v in body.items() if v is not None}
    response = messages(body)
    assert response.status_code == 400
    payload = response.json()
    assert payload["type"] == "error"
    assert payload["error"]["type"] == "invalid_request_error"
    assert message in payload["error"]["message"]


def test_chat_paths_are_not_served_by_an_anthropic_provider():
    provider = FakeProvider("anthropic")
    with httpx.Client(transport=FakeTransport(provider), base_url="http://f") as client:
        response = client.post("/chat/completions", json={})
    assert response.status_code == 404
    assert response.json()["error"]["type"] == "not_found_error"


def test_lost_tokens_count_only_what_an_earlier_breakpoint_actually_cached(
    anthropic, messages
):
    unmarked = {"role": "user", "content": [{"type": "text", "text": BOOK}]}
    messages(body_with(cached_book(), [unmarked]))
    grown = [
        unmarked,
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
        {
            "role": "user",
            "content": [{"type": "text", "text": "next", "cache_control": EPHEMERAL}],
        },
    ]
    usage = messages(body_with(cached_book(), grown)).json()["usage"]
    diagnostic = anthropic.last_request.diagnostic
    assert diagnostic["relation"] == "append"
    assert usage["cache_read_input_tokens"] > 0  # the system breakpoint was read
    assert diagnostic["shared_tokens"] > usage["cache_read_input_tokens"]
    assert diagnostic["lost_tokens"] == 0  # messages[0] was never cached


def test_lost_tokens_count_a_written_breakpoint_that_expired(anthropic, messages):
    messages(body_with(cached_book()))
    anthropic.advance(301)
    usage = messages(body_with(cached_book())).json()["usage"]
    assert usage["cache_read_input_tokens"] == 0
    assert (
        anthropic.last_request.diagnostic["lost_tokens"]
        == (usage["cache_creation_input_tokens"])
    )


def test_a_stream_with_repeated_scripted_tool_ids_streams_each_calls_own_arguments(
    anthropic, messages, sse
):
    import json

    anthropic.push(
        Reply(
            tool_calls=(
                ToolCall(name="ls", arguments='{"dir": "a"}', id="toolu_same"),
                ToolCall(name="ls", arguments='{"dir": "b"}', id="toolu_same"),
            )
        )
    )
    response = messages(body_with(cached_book(), stream=True))
    partial: dict[int, str] = {}
    for name, data in sse(response.text):
        payload = json.loads(data)
        if name == "content_block_delta" and payload["delta"]["type"] == (
            "input_json_delta"
        ):
            index = payload["index"]
            partial[index] = partial.get(index, "") + payload["delta"]["partial_json"]
    assert list(partial.values()) == ['{"dir": "a"}', '{"dir": "b"}']


def test_a_string_content_and_its_one_text_block_are_the_same_prompt(
    anthropic, messages
):
    """Documented shorthand: a string content is one text block."""
    as_string = {"role": "user", "content": QUESTION}
    as_block = {"role": "user", "content": [{"type": "text", "text": QUESTION}]}
    messages(body_with(BOOK, [as_string]))
    messages(body_with([{"type": "text", "text": BOOK}], [as_block]))
    diagnostic = anthropic.last_request.diagnostic
    assert diagnostic["relation"] == "repeat"
    assert diagnostic["divergence"] is None

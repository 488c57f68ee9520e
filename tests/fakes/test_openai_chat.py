"""Chat-completions wire shapes, read back through a real httpx client."""

from __future__ import annotations

import json

import httpx
import pytest

from reqfold.fakes import FakeProvider, FakeTransport, Reply, ToolCall

SYSTEM = {"role": "system", "content": "You are terse."}
USER = {"role": "user", "content": "list files"}


def chat(client: httpx.Client, **fields):
    body = {"model": "deepseek-chat", "messages": [SYSTEM, USER], **fields}
    return client.post("/chat/completions", json=body)


def reassemble(payloads):
    """Fold stream chunks the way the anchor harness does (wire mapping §6.2)."""
    text, reasoning, calls, finish, usage = "", "", {}, None, None
    for payload in payloads:
        for choice in payload["choices"]:
            delta = choice["delta"]
            reasoning += delta.get("reasoning_content") or ""
            text += delta.get("content") or ""
            for call in delta.get("tool_calls") or []:
                slot = calls.setdefault(
                    call["index"], {"id": "", "name": "", "arguments": ""}
                )
                slot["id"] = call.get("id", slot["id"])
                slot["name"] = call.get("function", {}).get("name", slot["name"])
                slot["arguments"] += call.get("function", {}).get("arguments", "")
            finish = choice.get("finish_reason") or finish
        usage = payload.get("usage") or usage
    return text, reasoning, list(calls.values()), finish, usage


def test_deepseek_stream_ends_with_done_and_carries_usage_on_the_finish_chunk(
    client, deepseek, sse, sse_json
):
    deepseek.push(Reply(text="hello world, this is long enough to split"))
    response = chat(client, stream=True)
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream; charset=utf-8"
    events = sse(response.text)
    assert events[-1] == (None, "[DONE]")
    payloads = sse_json(response.text)
    assert payloads[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert all(p["object"] == "chat.completion.chunk" for p in payloads)
    finish = payloads[-1]
    assert finish["choices"][0]["finish_reason"] == "stop"
    assert set(finish["usage"]) >= {
        "prompt_tokens",
        "prompt_cache_hit_tokens",
        "prompt_cache_miss_tokens",
    }
    assert all("usage" not in p for p in payloads[:-1])
    text, *_ = reassemble(payloads)
    assert text == "hello world, this is long enough to split"


def test_deepseek_stream_sends_reasoning_before_content_and_fragmented_tool_calls(
    client, deepseek, sse_json
):
    arguments = '{"path": "src/main.py", "limit": 200, "encoding": "utf-8"}'
    deepseek.push(
        Reply(
            text="Reading.",
            reasoning="Check the file first.",
            tool_calls=(
                ToolCall(name="read_file", arguments=arguments, id="call_9"),
                ToolCall.of("ls", {"dir": "."}),
            ),
        )
    )
    payloads = sse_json(chat(client, stream=True).text)
    first = payloads[0]["choices"][0]["delta"]
    assert first == {"role": "assistant", "content": None, "reasoning_content": ""}
    text, reasoning, calls, finish, usage = reassemble(payloads)
    assert (text, reasoning, finish) == (
        "Reading.",
        "Check the file first.",
        "tool_calls",
    )
    assert calls[0] == {"id": "call_9", "name": "read_file", "arguments": arguments}
    assert calls[1]["name"] == "ls"
    assert calls[1]["arguments"] == '{"dir":"."}'
    assert calls[1]["id"].startswith("call_1_")
    openings = [
        call
        for p in payloads
        for c in p["choices"]
        for call in c["delta"].get("tool_calls", [])
        if "id" in call
    ]
    assert all(call["function"]["arguments"] == "" for call in openings)
    fragments = [
        call
        for p in payloads
        for c in p["choices"]
        for call in c["delta"].get("tool_calls", [])
        if "id" not in call
    ]
    assert len(fragments) > 2
    assert all(set(f) == {"index", "function"} for f in fragments)
    assert usage["completion_tokens_details"]["reasoning_tokens"] > 0


def test_openai_stream_has_usage_only_when_include_usage_is_set(sse_json):
    provider = FakeProvider("openai")
    with httpx.Client(
        transport=FakeTransport(provider), base_url="https://api.openai.com/v1"
    ) as client:
        body = {"model": "gpt-4o", "messages": [USER], "stream": True}
        plain = sse_json(client.post("/chat/completions", json=body).text)
        assert all("usage" not in p for p in plain)
        with_usage = sse_json(
            client.post(
                "/chat/completions",
                json={**body, "stream_options": {"include_usage": True}},
            ).text
        )
    assert with_usage[-1]["choices"] == []
    assert with_usage[-1]["usage"]["prompt_tokens_details"]["cached_tokens"] == 0
    assert all(p["usage"] is None for p in with_usage[:-1])
    assert with_usage[0]["id"].startswith("chatcmpl-")


def test_non_streaming_completion_has_message_tool_calls_and_usage(client, deepseek):
    deepseek.push(
        Reply(
            tool_calls=(ToolCall.of("ls", {"dir": "."}, id="call_0"),), reasoning="why"
        )
    )
    body = chat(client).json()
    assert body["object"] == "chat.completion"
    choice = body["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    assert choice["message"] == {
        "role": "assistant",
        "content": "",
        "reasoning_content": "why",
        "tool_calls": [
            {
                "id": "call_0",
                "type": "function",
                "function": {"name": "ls", "arguments": '{"dir":"."}'},
            }
        ],
    }
    usage = body["usage"]
    assert (
        usage["prompt_tokens"]
        == usage["prompt_cache_hit_tokens"] + usage["prompt_cache_miss_tokens"]
    )
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]


def test_openai_flavour_reports_null_content_with_tool_calls_and_full_usage_details():
    provider = FakeProvider("openai")
    provider.push(Reply(tool_calls=(ToolCall.of("ls"),)))
    with httpx.Client(
        transport=FakeTransport(provider), base_url="https://x/v1"
    ) as client:
        body = client.post(
            "/chat/completions", json={"model": "gpt-4o", "messages": [USER]}
        ).json()
    assert body["choices"][0]["message"]["content"] is None
    assert body["usage"]["prompt_tokens_details"] == {
        "cached_tokens": 0,
        "audio_tokens": 0,
    }
    assert "prompt_cache_hit_tokens" not in body["usage"]


def test_both_chat_paths_are_served(client):
    for path in ("/chat/completions", "/v1/chat/completions"):
        assert (
            client.post(
                path, json={"model": "deepseek-chat", "messages": [USER]}
            ).status_code
            == 200
        )


def test_finish_reason_and_completion_tokens_can_be_scripted(client, deepseek):
    deepseek.push(Reply(text="cut", finish_reason="length", completion_tokens=4096))
    body = chat(client).json()
    assert body["choices"][0]["finish_reason"] == "length"
    assert body["usage"]["completion_tokens"] == 4096


INVALID = [
    (b"{not json", None, "not valid JSON"),
    (b"", None, "empty"),
    (b"\xff\xfe", None, "UTF-8"),
    (b'{"model": NaN, "messages": []}', None, "NaN"),
    (b"[]", None, "JSON object"),
    (json.dumps({"messages": [USER]}).encode(), "model", "'model' is required"),
    (
        json.dumps({"model": 3, "messages": [USER]}).encode(),
        "model",
        "non-empty string",
    ),
    (
        json.dumps({"model": "deepseek-chat"}).encode(),
        "messages",
        "'messages' is required",
    ),
    (
        json.dumps({"model": "deepseek-chat", "messages": []}).encode(),
        "messages",
        "at least one",
    ),
    (
        json.dumps({"model": "deepseek-chat", "messages": [{"content": "x"}]}).encode(),
        "messages[0].role",
        "must be one of",
    ),
    (
        json.dumps({"model": "deepseek-chat", "messages": [{"role": "user"}]}).encode(),
        "messages[0].content",
        "required",
    ),
    (
        json.dumps(
            {
                "model": "deepseek-chat",
                "messages": [{"role": "assistant", "content": None}],
            }
        ).encode(),
        "messages[0].content",
        "unless 'tool_calls'",
    ),
    (
        json.dumps(
            {
                "model": "deepseek-chat",
                "messages": [
                    {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": "c",
                                "type": "function",
                                "function": {"name": "f", "arguments": {}},
                            }
                        ],
                    }
                ],
            }
        ).encode(),
        "messages[0].tool_calls[0].function.arguments",
        "must be a string",
    ),
    (
        json.dumps(
            {"model": "deepseek-chat", "messages": [{"role": "tool", "content": "x"}]}
        ).encode(),
        "messages[0].tool_call_id",
        "tool_call_id",
    ),
    (
        json.dumps(
            {"model": "deepseek-chat", "messages": [USER], "tools": {}}
        ).encode(),
        "tools",
        "an array",
    ),
    (
        json.dumps(
            {
                "model": "deepseek-chat",
                "messages": [USER],
                "tools": [{"type": "function"}],
            }
        ).encode(),
        "tools[0].function",
        "an object",
    ),
    (
        json.dumps(
            {"model": "deepseek-chat", "messages": [USER], "stream": "yes"}
        ).encode(),
        "stream",
        "boolean",
    ),
    (
        json.dumps(
            {
                "model": "deepseek-chat",
                "messages": [USER],
                "stream_options": {"include_usage": True},
            }
        ).encode(),
        "stream_options",
        "only allowed",
    ),
    (
        json.dumps(
            {"model": "deepseek-chat", "messages": [USER], "temperature": "hot"}
        ).encode(),
        "temperature",
        "a number",
    ),
    (
        json.dumps(
            {"model": "deepseek-chat", "messages": [USER], "max_tokens": 1.5}
        ).encode(),
        "max_tokens",
        "an integer",
    ),
    (
        json.dumps(
            {"model": "deepseek-chat", "messages": [USER], "stop": [1]}
        ).encode(),
        "stop",
        "strings",
    ),
    (b"[" * 100_000 + b"]" * 100_000, None, "nested too deeply"),
]


@pytest.mark.parametrize(("raw", "param", "message"), INVALID)
def test_bad_requests_get_a_provider_shaped_400_naming_the_field(
    client, deepseek, raw, param, message
):
    response = client.post(
        "/chat/completions", content=raw, headers={"content-type": "application/json"}
    )
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error"
    assert error["param"] == param
    assert message in error["message"]
    assert deepseek.last_request.status == 400
    assert deepseek.last_request.diagnostic is None


def test_a_body_over_the_limit_gets_413():
    provider = FakeProvider("deepseek", max_body_bytes=1000)
    with httpx.Client(transport=FakeTransport(provider), base_url="http://f") as client:
        response = client.post("/chat/completions", content=b"x" * 1001)
    assert response.status_code == 413
    assert "limit of 1000 bytes" in response.json()["error"]["message"]


def test_unknown_paths_and_methods_get_404_and_405(client):
    assert client.post("/v1/completions", json={}).status_code == 404
    response = client.get("/chat/completions")
    assert response.status_code == 405
    assert response.headers["allow"] == "POST"
    assert client.post("/v1/messages", json={}).status_code == 404  # wrong dialect


def test_openai_echo_of_a_reasoning_tool_call_reply_is_not_a_divergence():
    provider = FakeProvider("openai")
    provider.push(Reply(reasoning="secret plan", tool_calls=(ToolCall.of("f", {}),)))
    with httpx.Client(
        transport=FakeTransport(provider), base_url="https://api.openai.com/v1"
    ) as client:
        first = client.post(
            "/chat/completions", json={"model": "gpt-4o", "messages": [USER]}
        )
        message = first.json()["choices"][0]["message"]
        assert "reasoning_content" not in message
        assert "reasoning_content" not in provider.last_request.reply
        call_id = message["tool_calls"][0]["id"]
        tool = {"role": "tool", "tool_call_id": call_id, "content": "1"}
        client.post(
            "/chat/completions",
            json={"model": "gpt-4o", "messages": [USER, message, tool]},
        )
    diagnostic = provider.last_request.diagnostic
    assert diagnostic["relation"] == "append"
    assert diagnostic["echo_divergence"] is None


@pytest.mark.parametrize(
    ("dialect", "stream_usage"),
    [("deepseek", "include_usage"), ("openai", "finish_chunk")],
)
def test_the_stream_usage_setting_decides_where_a_stream_carries_usage(
    sse_json, dialect, stream_usage
):
    provider = FakeProvider(dialect, stream_usage=stream_usage)
    body = {"model": provider.profile.models[0], "messages": [USER], "stream": True}
    with httpx.Client(
        transport=FakeTransport(provider), base_url="https://x"
    ) as client:
        plain = sse_json(client.post("/chat/completions", json=body).text)
        opted = sse_json(
            client.post(
                "/chat/completions",
                json={**body, "stream_options": {"include_usage": True}},
            ).text
        )
    if stream_usage == "finish_chunk":
        for payloads in (plain, opted):
            assert payloads[-1]["choices"][0]["finish_reason"] == "stop"
            assert payloads[-1]["usage"]["prompt_tokens"] > 0
    else:
        assert all(not p.get("usage") for p in plain)
        assert opted[-1]["choices"] == []
        assert opted[-1]["usage"]["prompt_tokens"] > 0

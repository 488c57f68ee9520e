"""The chat-completions client: body, headers, SSE and JSON replies, usage, errors."""

from __future__ import annotations

import asyncio
import json
import os
import ssl

import certifi
import httpx
import pytest

from reqfold.fakes import FakeProvider, FakeTransport, Reply, ToolCall, server_error
from reqfold.reference.json_values import canonical_json
from reqfold.reference.loop import (
    AbortSignal,
    ChatCompletionsClient,
    FrozenRequest,
    ProviderError,
    map_usage,
)


def request(**header):
    header = {"config": {"model": "deepseek-chat"}, **header}
    return FrozenRequest.build(
        turn=1,
        step=1,
        boundary=0,
        header=header,
        messages=[{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
    )


def complete(client, req=None):
    async def main():
        async with client:
            return await client.complete(req or request(), AbortSignal())

    return asyncio.run(main())


@pytest.mark.parametrize("stream", [True, False], ids=["sse", "json"])
@pytest.mark.spec("WIRE-1", "WIRE-5")
def test_streaming_and_plain_replies_assemble_the_same_content(stream):
    fake = FakeProvider("deepseek")
    fake.push(
        Reply(
            text="Reading.",
            reasoning="Check the file.",
            tool_calls=(ToolCall.of("read_file", {"path": "a.py"}, id="call_9"),),
        )
    )
    client = ChatCompletionsClient(
        base_url="http://fake", transport=FakeTransport(fake), stream=stream
    )
    reply = complete(client)
    assert reply.content == [
        {"type": "reasoning", "text": "Check the file."},
        {"type": "text", "text": "Reading."},
        {
            "type": "tool-call",
            "id": "call_9",
            "name": "read_file",
            "arguments": '{"path":"a.py"}',
        },
    ]
    assert reply.finish == "tool-calls"
    captured = fake.last_request
    assert captured.raw_body == canonical_json(client.body_for(request())).encode()
    assert captured.json["stream"] is stream
    assert ("stream_options" in captured.json) is stream


@pytest.mark.spec("WIRE-5")
def test_the_client_sends_compact_json_with_its_own_headers_and_deployment_settings():
    fake = FakeProvider("deepseek")
    client = ChatCompletionsClient(
        base_url="http://fake/v1/",
        api_key="sk-test",
        transport=FakeTransport(fake),
        settings={"thinking": {"type": "disabled"}},
    )
    complete(
        client,
        request(
            system="sys", tools=[{"name": "t", "description": "d", "parameters": {}}]
        ),
    )
    captured = fake.last_request
    assert captured.path == "/v1/chat/completions"
    headers = dict(captured.headers)
    assert headers["content-type"] == "application/json"
    assert headers["accept"] == "text/event-stream"
    assert headers["user-agent"].startswith("reqfold-reference/")
    assert headers["authorization"] == "<redacted>"
    assert list(captured.json) == [
        "model",
        "messages",
        "stream",
        "stream_options",
        "thinking",
        "tools",
    ]
    assert b" " not in captured.raw_body.replace(b"hi", b"")


@pytest.mark.parametrize("dialect", ["deepseek", "openai"])
def test_usage_records_cache_reads_and_excludes_them_from_input_tokens(dialect):
    fake = FakeProvider(dialect, min_cacheable_tokens=0, block_size=8, models=("*",))
    long = request(system="a fairly long system prompt that spans blocks " * 10)
    client = ChatCompletionsClient(
        base_url="http://fake", transport=FakeTransport(fake)
    )

    async def main():
        async with client:
            await client.complete(long, AbortSignal())
            return await client.complete(long, AbortSignal())

    reply = asyncio.run(main())
    raw = fake.last_request.usage
    cached = raw["prompt_tokens_details"]["cached_tokens"]
    assert cached > 0
    assert reply.usage == {
        "inputTokens": raw["prompt_tokens"] - cached,
        "outputTokens": raw["completion_tokens"],
        "cacheReadTokens": cached,
    }


def test_map_usage_prefers_cached_tokens_and_falls_back_to_deepseek_hit_tokens():
    assert map_usage(
        {"prompt_tokens": 100, "completion_tokens": 5, "prompt_cache_hit_tokens": 64}
    ) == {
        "inputTokens": 36,
        "outputTokens": 5,
        "cacheReadTokens": 64,
    }
    assert map_usage(
        {
            "prompt_tokens": 100,
            "completion_tokens": 5,
            "prompt_tokens_details": {"cached_tokens": 0},
            "prompt_cache_hit_tokens": 64,
        }
    ) == {"inputTokens": 100, "outputTokens": 5, "cacheReadTokens": 0}
    assert map_usage({"prompt_tokens": 7, "completion_tokens": 1}) == {
        "inputTokens": 7,
        "outputTokens": 1,
    }


@pytest.mark.parametrize(
    ("status", "code"),
    [(500, "SERVER"), (429, "RATE_LIMIT"), (401, "AUTH"), (404, "HTTP_404")],
)
def test_an_error_status_raises_a_provider_error_with_its_code(status, code):
    fake = FakeProvider("deepseek")
    fake.push(server_error(status, message="nope") if status >= 500 else _fault(status))
    client = ChatCompletionsClient(
        base_url="http://fake", transport=FakeTransport(fake)
    )
    with pytest.raises(ProviderError) as caught:
        complete(client)
    assert (caught.value.code, caught.value.status) == (code, status)


def _fault(status):
    from reqfold.fakes import Fault

    return Fault(status=status, message="nope")


def sse(*payloads, done=True, newline="\n"):
    frames = [f"data: {json.dumps(p)}{newline}{newline}" for p in payloads]
    if done:
        frames.append(f"data: [DONE]{newline}{newline}")
    return "".join(frames).encode()


def mock(body, status=200):
    return httpx.MockTransport(lambda request: httpx.Response(status, content=body))


def test_sse_frames_with_crlf_tool_calls_out_of_order_and_trailing_usage_are_read():
    body = sse(
        {
            "choices": [
                {
                    "delta": {
                        "tool_calls": [
                            {
                                "index": 1,
                                "id": "b",
                                "function": {"name": "nb", "arguments": "{"},
                            }
                        ]
                    }
                }
            ]
        },
        {
            "choices": [
                {
                    "delta": {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "a",
                                "function": {"name": "na", "arguments": "{}"},
                            }
                        ]
                    }
                }
            ]
        },
        {
            "choices": [
                {
                    "delta": {
                        "tool_calls": [{"index": 1, "function": {"arguments": "}"}}]
                    },
                    "finish_reason": "tool_calls",
                }
            ]
        },
        {
            "choices": [],
            "usage": {
                "prompt_tokens": 10,
                "completion_tokens": 2,
                "prompt_cache_hit_tokens": 0,
            },
        },
        newline="\r\n",
    )
    reply = complete(ChatCompletionsClient(base_url="http://x", transport=mock(body)))
    assert [(b["id"], b["arguments"]) for b in reply.content] == [
        ("b", "{}"),
        ("a", "{}"),
    ]
    assert reply.usage == {"inputTokens": 10, "outputTokens": 2, "cacheReadTokens": 0}


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (sse({"choices": [{"delta": {"content": "x"}}]}, done=False), "STREAM_CLOSED"),
        (b"data: not json\n\n", "MALFORMED_RESPONSE"),
        (
            sse(
                {
                    "choices": [
                        {"delta": {"content": "x"}, "finish_reason": "content_filter"}
                    ]
                }
            ),
            "MODEL_STOPPED_CONTENT_FILTER",
        ),
    ],
    ids=["no done", "bad payload", "content filter"],
)
def test_a_broken_or_refused_stream_raises_with_a_stable_code(body, code):
    client = ChatCompletionsClient(base_url="http://x", transport=mock(body))
    with pytest.raises(ProviderError) as caught:
        complete(client)
    assert caught.value.code == code


@pytest.mark.spec("WIRE-1", "WIRE-4", "REQ-6")
@pytest.mark.parametrize(
    "key",
    [
        "model",
        "messages",
        "tools",
        "temperature",
        "max_tokens",
        "stop",
        "stream",
        "stream_options",
    ],
)
def test_deployment_settings_cannot_override_a_member_the_log_or_the_stream_determines(
    key,
):
    from reqfold.reference.request import build_chat_body

    with pytest.raises(ValueError, match=key):
        ChatCompletionsClient(base_url="http://fake", settings={key: "x"})
    with pytest.raises(ValueError, match=key):
        build_chat_body({"config": {"model": "m"}}, [], settings={key: "x"})
    client = ChatCompletionsClient(
        base_url="http://fake", settings={"reasoning_effort": "high"}
    )
    assert client.body_for(request())["reasoning_effort"] == "high"


def test_every_client_of_a_process_shares_one_tls_context(monkeypatch):
    """Reading the CA bundle costs tens of milliseconds; a loop opens a client
    per conversation, so the context is built once and handed to each."""
    built = []
    real = ssl.create_default_context

    def counting(*args, **kwargs):
        built.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(ssl, "create_default_context", counting)
    from reqfold.reference.loop import client as client_module

    client_module._tls_for.cache_clear()
    for _ in range(3):
        fake = FakeProvider("deepseek")
        fake.push(Reply(text="ok"))
        client = ChatCompletionsClient(
            base_url="https://fake", transport=FakeTransport(fake), stream=False
        )
        assert complete(client).content == [{"type": "text", "text": "ok"}]
    assert len(built) == 1


def _without_proxies(monkeypatch):
    # urllib.request.getproxies reads every *_proxy variable, in either case
    for name in list(os.environ):
        if name.lower().endswith("_proxy"):
            monkeypatch.delenv(name)


def _ask(base_url):
    fake = FakeProvider("deepseek")
    fake.push(Reply(text="ok"))
    client = ChatCompletionsClient(
        base_url=base_url, transport=FakeTransport(fake), stream=False
    )
    assert complete(client).content == [{"type": "text", "text": "ok"}]


def test_a_client_of_a_plain_http_url_reads_no_ca_bundle(monkeypatch):
    """A harness adapter talking to a local fake never uses TLS: it starts
    without reading the CA bundle (about 50 ms of CPU)."""
    from reqfold.reference.loop import client as client_module

    def refused(*args):
        raise AssertionError("the CA bundle was read")

    _without_proxies(monkeypatch)
    monkeypatch.setattr(client_module, "_tls_for", refused)
    _ask("http://127.0.0.1:8000")
    _ask("HTTP://fake")


@pytest.mark.parametrize(
    ("base_url", "proxy"),
    [
        ("https://fake", None),
        ("http://fake", ("HTTPS_PROXY", "http://proxy:3128")),
        ("http://fake", ("http_proxy", "http://proxy:3128")),
        ("http://fake", ("ALL_PROXY", "socks5://proxy:1080")),
    ],
    ids=["an https URL", "https_proxy set", "http_proxy set", "all_proxy set"],
)
def test_a_client_that_may_use_tls_gets_the_default_context(
    monkeypatch, base_url, proxy
):
    from reqfold.reference.loop import client as client_module

    _without_proxies(monkeypatch)
    if proxy is not None:
        monkeypatch.setenv(*proxy)
    default = client_module._tls()
    context = client_module._tls_of(base_url)
    assert context is default
    assert context.verify_mode is ssl.CERT_REQUIRED


@pytest.mark.parametrize(
    "unused", [None, ("NO_PROXY", "localhost"), ("ftp_proxy", "http://proxy:21")]
)
def test_the_context_of_a_plain_http_client_trusts_no_certificate(monkeypatch, unused):
    """Also with proxy variables httpx does not route through (no, ftp)."""
    from reqfold.reference.loop import client as client_module

    _without_proxies(monkeypatch)
    if unused is not None:
        monkeypatch.setenv(*unused)
    context = client_module._tls_of("http://fake")
    assert context.verify_mode is ssl.CERT_REQUIRED
    assert context.check_hostname
    assert context.get_ca_certs() == []


def test_a_changed_ca_setting_gets_a_new_tls_context(monkeypatch):
    """httpx reads SSL_CERT_FILE when it builds a context: a process (a
    user's test) that sets it after its first client gets the new roots."""
    from reqfold.reference.loop import client as client_module

    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    first = client_module._tls()
    assert client_module._tls() is first
    monkeypatch.setenv("SSL_CERT_FILE", certifi.where())
    assert client_module._tls() is not first

"""The ASGI app served by uvicorn on a loopback port."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from reqfold.fakes import FakeProvider, Reply, ToolCall, stream_cut
from reqfold.fakes.app import noop_app
from reqfold.fakes.server import running_server

pytestmark = [pytest.mark.slow, pytest.mark.anyio]

BODY = {
    "model": "deepseek-chat",
    "messages": [
        {"role": "system", "content": "s " * 300},
        {"role": "user", "content": "hi"},
    ],
}
AUTH = {"authorization": "Bearer sk-live-secret"}


@pytest.fixture
def served():
    provider = FakeProvider("deepseek", max_body_bytes=100_000)
    with running_server(provider) as url:
        yield provider, url


async def test_sse_stream_round_trips_through_a_real_server(served):
    provider, url = served
    provider.push(
        Reply(
            text="streamed over a socket",
            reasoning="hmm",
            tool_calls=(ToolCall.of("ls", {"dir": "."}),),
        )
    )
    lines: list[str] = []
    async with (
        httpx.AsyncClient(base_url=url, headers=AUTH) as client,
        client.stream(
            "POST", "/v1/chat/completions", json={**BODY, "stream": True}
        ) as response,
    ):
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        lines = [line async for line in response.aiter_lines() if line]
    assert lines[-1] == "data: [DONE]"
    payloads = [json.loads(line[6:]) for line in lines[:-1]]
    text = "".join(p["choices"][0]["delta"].get("content") or "" for p in payloads)
    assert text == "streamed over a socket"
    assert payloads[-1]["usage"]["prompt_tokens"] == provider.count_prompt_tokens(BODY)


async def test_a_gate_opened_over_http_releases_a_held_response(served):
    provider, url = served
    async with httpx.AsyncClient(base_url=url) as client:
        await client.post(
            "/_fake/script", json={"replies": [{"text": "held", "hold": "g1"}]}
        )
        pending = asyncio.create_task(client.post("/chat/completions", json=BODY))
        gate = provider.gate("g1")
        assert await asyncio.to_thread(gate.wait_until_held, 10)
        assert not pending.done()
        await client.post("/_fake/gates/g1/open")
        response = await pending
    assert response.json()["choices"][0]["message"]["content"] == "held"


async def test_a_cut_stream_drops_the_connection(served):
    provider, url = served
    provider.push(stream_cut(after_frames=2, reply=Reply(text="y" * 200)))
    async with (
        httpx.AsyncClient(base_url=url) as client,
        client.stream(
            "POST", "/chat/completions", json={**BODY, "stream": True}
        ) as response,
    ):
        with pytest.raises(httpx.RemoteProtocolError):
            async for _ in response.aiter_bytes():
                pass


async def test_huge_and_malformed_bodies_get_4xx_not_500(served):
    _, url = served
    async with httpx.AsyncClient(base_url=url) as client:
        huge = await client.post("/chat/completions", content=b"x" * 2_000_000)
        bad = await client.post("/chat/completions", content=b'{"model": ')
        wrong = await client.post(
            "/chat/completions", json={"model": 1, "messages": "no"}
        )
    assert (huge.status_code, bad.status_code, wrong.status_code) == (413, 400, 400)
    assert huge.json()["error"]["type"] == "invalid_request_error"


async def test_concurrent_requests_over_the_socket_keep_the_index_consistent(served):
    provider, url = served
    async with httpx.AsyncClient(base_url=url, headers=AUTH) as client:
        responses = await asyncio.gather(
            *(client.post("/chat/completions", json=BODY) for _ in range(24))
        )
    assert {r.status_code for r in responses} == {200}
    hits = sorted(r.json()["usage"]["prompt_cache_hit_tokens"] for r in responses)
    n = provider.count_prompt_tokens(BODY)
    assert hits == [0] + [((n - 1) // 64) * 64] * 23
    assert sorted(r.index for r in provider.requests) == list(range(24))


async def test_api_keys_never_reach_captures(served):
    provider, url = served
    async with httpx.AsyncClient(base_url=url, headers=AUTH) as client:
        await client.post("/chat/completions", json=BODY)
        dump = (await client.get("/_fake/requests.jsonl")).text
    assert "sk-live-secret" not in dump
    assert "sk-live-secret" not in provider.capture_jsonl()


async def test_the_noop_app_answers_every_request():
    with running_server(app=noop_app) as url:
        async with httpx.AsyncClient(base_url=url) as client:
            response = await client.post("/anything", json=BODY)
    assert (response.status_code, response.json()) == (200, {})

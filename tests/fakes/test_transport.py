"""The in-process httpx transport and respx route."""

from __future__ import annotations

import asyncio

import httpx
import pytest
import respx

from reqfold.fakes import (
    FakeProvider,
    FakeTransport,
    Reply,
    route_provider,
    slow_first_byte,
    stream_cut,
)

pytestmark = pytest.mark.anyio

BODY = {
    "model": "deepseek-chat",
    "messages": [{"role": "user", "content": "hi"}],
    "stream": True,
}


async def test_async_streams_arrive_one_sse_frame_at_a_time(deepseek):
    deepseek.push(Reply(text="abcdefghij" * 5))
    async with (
        httpx.AsyncClient(
            transport=FakeTransport(deepseek), base_url="http://f"
        ) as client,
        client.stream("POST", "/chat/completions", json=BODY) as response,
    ):
        chunks = [chunk async for chunk in response.aiter_bytes()]
    assert len(chunks) > 3
    assert all(
        chunk.startswith(b"data: ") and chunk.endswith(b"\n\n") for chunk in chunks
    )
    assert chunks[-1] == b"data: [DONE]\n\n"


async def test_a_gate_holds_the_first_byte_until_the_test_opens_it(deepseek):
    gate = deepseek.gate("first-byte")
    deepseek.push(slow_first_byte(Reply(text="late"), hold=gate))
    async with httpx.AsyncClient(
        transport=FakeTransport(deepseek), base_url="http://f"
    ) as client:
        pending = asyncio.create_task(client.post("/chat/completions", json=BODY))
        assert await asyncio.to_thread(gate.wait_until_held, 10)
        assert not pending.done()
        assert deepseek.last_request.status == 200  # processed, only delivery is held
        gate.open()
        response = await pending
    assert response.status_code == 200
    assert '"late"' in response.text


async def test_a_cut_stream_raises_after_the_delivered_frames(deepseek):
    deepseek.push(stream_cut(after_frames=2, reply=Reply(text="x" * 100)))
    received: list[bytes] = []

    async def consume(response: httpx.Response) -> None:
        async for chunk in response.aiter_bytes():
            received.append(chunk)  # noqa: PERF401 (kept until the cut)

    async with (
        httpx.AsyncClient(
            transport=FakeTransport(deepseek), base_url="http://f"
        ) as client,
        client.stream("POST", "/chat/completions", json=BODY) as response,
    ):
        with pytest.raises(httpx.RemoteProtocolError, match="stream cut"):
            await consume(response)
    assert len(received) == 2
    assert b"[DONE]" not in b"".join(received)


async def test_keepalive_comments_precede_the_first_event(deepseek):
    deepseek.push(Reply(text="hi", keepalives=2))
    async with httpx.AsyncClient(
        transport=FakeTransport(deepseek), base_url="http://f"
    ) as client:
        response = await client.post("/chat/completions", json=BODY)
    assert response.text.startswith(": keep-alive\n\n: keep-alive\n\ndata: ")


def test_the_sync_transport_times_out_on_a_gate_nobody_opens():
    provider = FakeProvider("deepseek")
    provider.push(slow_first_byte(hold="never"))
    transport = FakeTransport(provider)
    transport.hold_timeout = 0.01
    with (
        httpx.Client(transport=transport, base_url="http://f") as client,
        pytest.raises(httpx.ReadTimeout, match="never"),
    ):
        client.post("/chat/completions", json=BODY)


def test_a_non_streaming_cut_truncates_the_body(deepseek):
    deepseek.push(stream_cut(after_frames=0))
    with (
        httpx.Client(transport=FakeTransport(deepseek), base_url="http://f") as client,
        pytest.raises(httpx.RemoteProtocolError),
    ):
        client.post("/chat/completions", json={**BODY, "stream": False})


def test_a_respx_route_serves_the_same_core(deepseek):
    deepseek.push(Reply(text="via respx"))
    with respx.mock(assert_all_called=True) as router:
        route_provider(router, deepseek, "https://api.deepseek.com")
        with httpx.Client() as client:
            response = client.post(
                "https://api.deepseek.com/chat/completions",
                json={**BODY, "stream": False},
            )
    assert response.json()["choices"][0]["message"]["content"] == "via respx"
    assert deepseek.last_request.path == "/chat/completions"


async def test_a_gate_obtained_before_a_reset_still_releases_a_response_held_after_it(
    deepseek,
):
    gate = deepseek.gate("g")
    deepseek.reset()
    deepseek.push(Reply(text="late", hold="g"))
    async with httpx.AsyncClient(
        transport=FakeTransport(deepseek), base_url="http://f"
    ) as client:
        pending = asyncio.create_task(client.post("/chat/completions", json=BODY))
        assert await asyncio.to_thread(gate.wait_until_held, 2)
        gate.open()
        response = await asyncio.wait_for(pending, 2)
    assert response.status_code == 200


async def test_a_reset_releases_a_response_held_on_a_gate(deepseek):
    deepseek.push(Reply(text="late", hold="g"))
    async with httpx.AsyncClient(
        transport=FakeTransport(deepseek), base_url="http://f"
    ) as client:
        pending = asyncio.create_task(client.post("/chat/completions", json=BODY))
        assert await asyncio.to_thread(deepseek.gate("g").wait_until_held, 2)
        deepseek.reset()
        response = await asyncio.wait_for(pending, 2)
    assert response.status_code == 200
    assert not deepseek.gate("g").is_open  # closed again for what comes next

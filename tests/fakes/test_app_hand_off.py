"""The ASGI app serves a small request on the event loop and hands a large
one to a worker thread (the loop keeps serving other clients meanwhile:
tests/fakes/test_large_requests.py shows that over a real server)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from fakes import FakeProvider
from fakes.app import INLINE_BODY_BYTES, create_app


def _body(size: int) -> bytes:
    """A chat request body of about `size` bytes."""
    filler = size - len(json.dumps(_request("")))
    return json.dumps(_request("w " * (filler // 2))).encode()


def _request(content: str) -> dict[str, Any]:
    return {
        "model": "deepseek-chat",
        "messages": [{"role": "user", "content": content}],
    }


def _serve(
    body: bytes, handed: list[int], monkeypatch: pytest.MonkeyPatch
) -> tuple[int, bytes]:
    """Serve one request to the app in process; `handed` gets the body size
    of each request handed to a worker thread."""
    to_thread = asyncio.to_thread

    async def counting_to_thread(function: Any, *args: Any) -> Any:
        handed.append(len(body))
        return await to_thread(function, *args)

    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(dict(message))

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/chat/completions",
        "headers": [(b"content-type", b"application/json")],
        "query_string": b"",
    }
    app = create_app(FakeProvider("deepseek"))
    monkeypatch.setattr(asyncio, "to_thread", counting_to_thread)
    asyncio.run(app(scope, receive, send))  # type: ignore[arg-type]
    status = sent[0]["status"]
    return status, b"".join(m.get("body", b"") for m in sent[1:])


@pytest.mark.parametrize(
    ("size", "in_a_thread"),
    [
        (2_000, False),
        (INLINE_BODY_BYTES - 100, False),
        (INLINE_BODY_BYTES + 100, True),
        (4 * INLINE_BODY_BYTES, True),
    ],
)
def test_only_a_body_over_the_inline_size_is_handed_to_a_worker_thread(
    size: int, in_a_thread: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = _body(size)
    assert abs(len(body) - size) < 10
    handed: list[int] = []
    status, answer = _serve(body, handed, monkeypatch)
    assert status == 200
    assert json.loads(answer)["choices"][0]["message"]["role"] == "assistant"
    assert handed == ([len(body)] if in_a_thread else [])

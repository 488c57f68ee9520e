"""The ASGI shell: serves a `FakeProvider` to harnesses in other processes.

A plain ASGI 3 application (no framework). It reads the request body up
to the profile's `max_body_bytes` (one byte more and it stops reading and
lets the core answer 413), hands the request to the core in a worker
thread (so a large request never stalls the event loop and the other
clients), then plays the plan: waits at the configured gate, then for the
delay, before the first byte (and drops the reply if the client leaves
meanwhile), sends each chunk as its own body message (so SSE
frames reach the client one by one), and for a cut stream returns without
finishing the response, which makes the server drop the connection. It
answers lifespan events and refuses websockets. It never logs headers, so
API keys stay out of logs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from reqfold.fakes.http import HttpRequest, LazyChunks, ResponsePlan
from reqfold.fakes.provider import FakeProvider
from reqfold.fakes.routing import serve_request

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


async def _read_body(receive: Receive, limit: int) -> bytes | None:
    """The body, at most `limit + 1` bytes of it; `None` if the client left."""
    parts: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunk = message.get("body", b"")
        if size <= limit:
            parts.append(chunk)
            size += len(chunk)
        if not message.get("more_body", False) or size > limit:
            return b"".join(parts)


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


def create_app(provider: FakeProvider) -> ASGIApp:
    """Build the ASGI application for `provider`."""

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1003})
            return
        body = await _read_body(receive, provider.profile.max_body_bytes)
        if body is None:
            return
        query = scope.get("query_string", b"")
        request = HttpRequest(
            method=scope["method"],
            path=scope["path"],
            headers=tuple(
                (key.decode("latin-1").lower(), value.decode("latin-1"))
                for key, value in scope.get("headers", [])
            ),
            body=body,
            query=query.decode("latin-1") if isinstance(query, bytes) else "",
        )
        # In a worker thread: parsing and tokenizing a large body takes
        # seconds, and the event loop must keep serving the other clients.
        plan = await asyncio.to_thread(serve_request, provider, request)
        if not await _until_first_byte(plan, receive):
            return  # the client left (a cancel): no one to answer
        await send(
            {
                "type": "http.response.start",
                "status": plan.status,
                "headers": [
                    (key.encode("latin-1"), value.encode("latin-1"))
                    for key, value in plan.headers
                ],
            }
        )
        if isinstance(plan.chunks, LazyChunks):
            await _send_lazy(plan.chunks, send)
            return
        # The last chunk ends the response (one message less for a JSON
        # answer); a cut response returns without ending, which drops it.
        last = len(plan.chunks) - 1
        for position, chunk in enumerate(plan.chunks):
            more = plan.cut or position < last
            await send({"type": "http.response.body", "body": chunk, "more_body": more})
        if not plan.chunks and not plan.cut:
            await send({"type": "http.response.body", "body": b"", "more_body": False})

    return app


async def _until_first_byte(plan: ResponsePlan, receive: Receive) -> bool:
    """Wait out the plan's gate, then its delay; `False` if the client left
    meanwhile. A cancelled request's reply is then dropped at once instead of
    waiting on, so the server's stop has nothing to cut short (a delay over
    its 2 s graceful stop made uvicorn log a traceback: issue 28)."""
    if plan.hold is None and not plan.delay:
        return True

    async def first_byte_due() -> None:
        if plan.hold is not None:
            await plan.hold.wait()
        if plan.delay:
            await asyncio.sleep(plan.delay)

    async def client_left() -> None:
        while (await receive())["type"] != "http.disconnect":
            pass

    due = asyncio.ensure_future(first_byte_due())
    left = asyncio.ensure_future(client_left())
    done, pending = await asyncio.wait({due, left}, return_when=asyncio.FIRST_COMPLETED)
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    return due in done


async def _send_lazy(chunks: LazyChunks, send: Send) -> None:
    """Send chunks made one at a time, each in a worker thread (a capture
    line is rebuilt and dumped there), so the event loop keeps serving."""
    pieces = iter(chunks)
    chunk = await asyncio.to_thread(next, pieces, None)
    sent = False
    while chunk is not None:
        following = await asyncio.to_thread(next, pieces, None)
        more = following is not None
        await send({"type": "http.response.body", "body": chunk, "more_body": more})
        chunk, sent = following, True
    if not sent:
        await send({"type": "http.response.body", "body": b"", "more_body": False})


async def noop_app(scope: Scope, receive: Receive, send: Send) -> None:
    """An ASGI app that answers every request `200 {}`: the benchmark baseline."""
    if scope["type"] == "lifespan":
        await _lifespan(receive, send)
        return
    if scope["type"] != "http":
        return
    while True:
        message = await receive()
        if message["type"] == "http.disconnect" or not message.get("more_body", False):
            break
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", b"2"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": b"{}", "more_body": False})

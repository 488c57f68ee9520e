"""In-process shells: an httpx transport and a respx route, no sockets.

`FakeTransport(provider)` is both an `httpx.BaseTransport` and an
`httpx.AsyncBaseTransport`, so it plugs into `httpx.Client(transport=...)`
and `httpx.AsyncClient(transport=...)` (and into SDKs that accept an
`http_client`). Unlike `httpx.ASGITransport`, it streams: a response's
chunks are yielded one SSE frame at a time, a held first byte is awaited
before the response returns, and a scripted cut raises
`httpx.RemoteProtocolError` after the delivered frames, as a dropped
connection does.

`route_provider(router, provider, base_url)` mounts the same provider on a
respx router for suites already built on respx; respx collects whole
bodies, so use the transport for timing and cut-stream tests.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING

import httpx

from reqfold.fakes.http import HttpRequest, ResponsePlan
from reqfold.fakes.provider import FakeProvider
from reqfold.fakes.routing import serve_request

if TYPE_CHECKING:
    import respx

CUT_MESSAGE = (
    "peer closed connection without sending complete message body (fake stream cut)"
)


def to_core_request(request: httpx.Request, body: bytes) -> HttpRequest:
    """Convert an httpx request (body already read) for the core."""
    return HttpRequest(
        method=request.method,
        path=request.url.path,
        headers=tuple(
            (key.decode("latin-1").lower(), value.decode("latin-1"))
            for key, value in request.headers.raw
        ),
        body=body,
        query=request.url.query.decode("ascii", "replace"),
    )


class _SyncPlanStream(httpx.SyncByteStream):
    def __init__(self, plan: ResponsePlan) -> None:
        self._plan = plan

    def __iter__(self) -> Iterator[bytes]:
        yield from self._plan.chunks
        if self._plan.cut:
            raise httpx.RemoteProtocolError(CUT_MESSAGE)


class _AsyncPlanStream(httpx.AsyncByteStream):
    def __init__(self, plan: ResponsePlan) -> None:
        self._plan = plan

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self._plan.chunks:
            yield chunk
            await asyncio.sleep(0)  # let other tasks run between frames
        if self._plan.cut:
            raise httpx.RemoteProtocolError(CUT_MESSAGE)


class FakeTransport(httpx.BaseTransport, httpx.AsyncBaseTransport):
    """An httpx transport answered by a `FakeProvider` in this process.

    Args:
        provider: the provider answering requests.
        hold_timeout: the sync transport blocks on a held gate at most
            this long, then raises `httpx.ReadTimeout` (the async transport
            waits until the gate opens or the task is cancelled).
    """

    def __init__(
        self, provider: FakeProvider, *, hold_timeout: float | None = 30.0
    ) -> None:
        self.provider = provider
        self.hold_timeout = hold_timeout

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Answer a sync request."""
        plan = serve_request(self.provider, to_core_request(request, request.read()))
        if plan.hold is not None and not plan.hold.wait_blocking(self.hold_timeout):
            raise httpx.ReadTimeout(
                f"gate {plan.hold.name!r} stayed closed for {self.hold_timeout} s",
                request=request,
            )
        if plan.delay:
            time.sleep(plan.delay)
        return httpx.Response(
            plan.status,
            headers=list(plan.headers),
            stream=_SyncPlanStream(plan),
            request=request,
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Answer an async request."""
        plan = serve_request(
            self.provider, to_core_request(request, await request.aread())
        )
        if plan.hold is not None:
            await plan.hold.wait()
        if plan.delay:
            await asyncio.sleep(plan.delay)
        return httpx.Response(
            plan.status,
            headers=list(plan.headers),
            stream=_AsyncPlanStream(plan),
            request=request,
        )


def route_provider(
    router: respx.MockRouter,
    provider: FakeProvider,
    base_url: str = "https://api.deepseek.com",
) -> respx.Route:
    """Route every request under `base_url` on `router` to `provider`.

    The response body is delivered whole (respx does not stream); a cut
    stream arrives as the frames before the cut, without `[DONE]`.
    """

    def answer(request: httpx.Request) -> httpx.Response:
        plan = serve_request(provider, to_core_request(request, request.read()))
        return httpx.Response(
            plan.status, headers=list(plan.headers), content=plan.body, request=request
        )

    prefix = base_url.rstrip("/")
    route = router.route(url__startswith=prefix + "/")
    route.mock(side_effect=answer)
    return route

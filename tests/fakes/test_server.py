"""How the fake's uvicorn server stops: at once when asked, yet answering
a request in flight in full, up to its graceful timeout."""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
from typing import Any

import httpx
import pytest

from reqfold import fakes
from reqfold.fakes.app import noop_app
from reqfold.fakes.server import QuietServer, bind_socket, running_server

pytestmark = pytest.mark.slow  # each test serves on a real socket


def serve_in_thread(server: QuietServer) -> tuple[threading.Thread, socket.socket]:
    """`server` serving on a new loopback socket from a started thread."""
    sock = bind_socket()
    thread = threading.Thread(
        target=lambda: asyncio.run(server.serve(sockets=[sock])), daemon=True
    )
    thread.start()
    return thread, sock


def test_asking_to_stop_wakes_the_server_without_waiting_for_its_tick(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # with a tick of an hour, only `stop` waking the main loop ends the
    # server before the join below gives up (uvicorn itself sleeps a tick)
    monkeypatch.setattr(fakes.server, "TICK", 3600.0)
    before = set(threading.enumerate())
    with running_server(app=noop_app) as url:
        assert httpx.post(url + "/noop", content=b"{}").status_code == 200
        new = set(threading.enumerate()) - before
        (server_thread,) = [t for t in new if t.name == "fake-provider-server"]
    assert not server_thread.is_alive()


def test_a_request_being_answered_when_the_stop_comes_is_answered_in_full() -> None:
    started, release = threading.Event(), threading.Event()

    async def slow_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        started.set()
        await asyncio.to_thread(release.wait, 30)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"done"})

    stopping = threading.Event()

    class TellsWhenStopping(QuietServer):
        async def shutdown(self, sockets: Any = None) -> None:
            stopping.set()
            await super().shutdown(sockets)

    server = TellsWhenStopping(fakes.server.make_server(slow_app).config)
    thread, sock = serve_in_thread(server)
    answers: list[httpx.Response] = []
    url = fakes.server.base_url(sock)
    client = threading.Thread(target=lambda: answers.append(httpx.get(url, timeout=30)))
    client.start()
    assert started.wait(30)
    server.stop()
    assert stopping.wait(30)  # the answer is held until the shutdown has begun
    release.set()
    client.join(30)
    thread.join(30)
    sock.close()
    assert [(a.status_code, a.content) for a in answers] == [(200, b"done")]
    assert not thread.is_alive()


def test_a_stop_before_the_server_runs_still_ends_it() -> None:
    server = fakes.server.make_server(noop_app)
    server.stop()
    thread, sock = serve_in_thread(server)
    thread.join(30)
    sock.close()
    assert not thread.is_alive()


def test_a_request_still_running_at_the_graceful_timeout_is_cancelled_and_logged() -> (
    None
):
    started = threading.Event()

    async def stuck_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        started.set()
        await asyncio.Event().wait()  # never answers

    server = fakes.server.make_server(stuck_app)
    server.config.timeout_graceful_shutdown = 0.2
    thread, sock = serve_in_thread(server)
    url = fakes.server.base_url(sock)
    got: list[int | str] = []

    def ask() -> None:
        try:
            got.append(httpx.get(url, timeout=30).status_code)
        except httpx.HTTPError as error:
            got.append(type(error).__name__)

    client = threading.Thread(target=ask)
    client.start()
    assert started.wait(30)
    said: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: said.append(record.getMessage())  # type: ignore[method-assign]
    fakes.server.LOGGER.addHandler(handler)  # uvicorn's loggers do not propagate
    try:
        server.stop()
        thread.join(30)
    finally:
        fakes.server.LOGGER.removeHandler(handler)
    client.join(30)
    sock.close()
    assert not thread.is_alive()
    assert any("Cancel 1 running task(s)" in line for line in said)
    assert got == [500]  # uvicorn answers for the cancelled app

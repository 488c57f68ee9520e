"""Serving the ASGI app with uvicorn on a loopback socket.

`bind_socket` binds and listens before the server starts, so the URL is
known (and connections queue) immediately: nobody has to poll or sleep to
wait for readiness. `running_server` serves a provider from a background
thread for tests and scripts; `serve` runs in the current thread until
SIGINT/SIGTERM (the CLI). Logging is quiet by default and never includes
request headers, so API keys are not logged.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import threading
from collections.abc import Generator, Iterator
from typing import Any

import uvicorn

from fakes.app import create_app
from fakes.provider import FakeProvider

LOOPBACK = "127.0.0.1"


def bind_socket(host: str = LOOPBACK, port: int = 0) -> socket.socket:
    """A listening TCP socket on `host:port` (port 0 picks a free one)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto=IPPROTO_TCP: asyncio only sets TCP_NODELAY on accepted sockets whose
    # proto says TCP; with proto 0 every small write waits on a delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
        sock.set_inheritable(True)
    except OSError:
        sock.close()
        raise
    return sock


def base_url(sock: socket.socket) -> str:
    """`http://host:port` of a bound socket."""
    host, port = sock.getsockname()[:2]
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}"


class QuietServer(uvicorn.Server):
    """A uvicorn server that stops on SIGINT/SIGTERM and then returns normally.

    Stock uvicorn re-raises the captured signal after shutdown, which turns
    a clean stop into a non-zero exit; the fake's CLI must exit 0.
    """

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        """Install stop handlers while serving (main thread only)."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = {
            sig: signal.signal(sig, self.handle_exit)
            for sig in (signal.SIGINT, signal.SIGTERM)
        }
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def make_server(
    app: Any, *, log_level: str = "warning", access_log: bool = False
) -> QuietServer:
    """A uvicorn server for `app` with the fake's logging defaults."""
    config = uvicorn.Config(
        app,
        log_level=log_level,
        access_log=access_log,
        lifespan="on",
        timeout_graceful_shutdown=2,
        server_header=False,
    )
    return QuietServer(config)


def serve(app: Any, sock: socket.socket, **options: Any) -> None:
    """Serve `app` on `sock` in this thread until SIGINT/SIGTERM."""
    server = make_server(app, **options)
    asyncio.run(server.serve(sockets=[sock]))


@contextlib.contextmanager
def running_server(
    provider: FakeProvider | None = None,
    *,
    app: Any = None,
    host: str = LOOPBACK,
    port: int = 0,
    **options: Any,
) -> Iterator[str]:
    """Serve `provider` (or any ASGI `app`) from a thread; yields the base URL.

    The socket listens before this yields, so requests can be sent at once.
    Leaving the block stops the server and joins the thread.
    """
    if app is None:
        if provider is None:
            raise TypeError("running_server needs a provider or an app")
        app = create_app(provider)
    sock = bind_socket(host, port)
    server = make_server(app, **options)
    failure: list[BaseException] = []

    def run() -> None:
        try:
            asyncio.run(server.serve(sockets=[sock]))
        except BaseException as error:  # reported when the block exits
            failure.append(error)

    thread = threading.Thread(target=run, name="fake-provider-server", daemon=True)
    thread.start()
    try:
        yield base_url(sock)
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
    if failure:
        raise RuntimeError("the fake provider server failed") from failure[0]

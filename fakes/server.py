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
import logging
import signal
import socket
import threading
from collections.abc import Generator, Iterator
from typing import Any

import uvicorn

from reqfold.fakes.app import create_app
from reqfold.fakes.provider import FakeProvider

LOOPBACK = "127.0.0.1"
LOGGER = logging.getLogger("uvicorn.error")
"""uvicorn's own logger: a stop says what it cancelled, as uvicorn's does."""


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


TICK = 0.1
"""Seconds between uvicorn's housekeeping ticks (the Date header, exit checks)."""
DRAIN_POLL = 0.005
"""Seconds between looks at the open connections while a stop drains them."""


class QuietServer(uvicorn.Server):
    """A uvicorn server that stops on SIGINT/SIGTERM and then returns normally,
    and stops at once when asked.

    Stock uvicorn re-raises the captured signal after shutdown, which turns
    a clean stop into a non-zero exit; the fake's CLI must exit 0. It also
    notices a stop only at its next tick and then pauses once more (and
    polls) for connections to finish, a wait on every stop that a test
    suite starting and stopping many servers pays each time. Here `stop`
    (or a signal) wakes the main loop at once, and shutdown waits for the
    open connections, polling every `DRAIN_POLL` seconds, only while there
    are any, up to ``timeout_graceful_shutdown`` as uvicorn does.
    """

    _wake: asyncio.Event | None = None
    _loop: asyncio.AbstractEventLoop | None = None

    def stop(self) -> None:
        """Ask the server to stop; callable from any thread."""
        self.should_exit = True
        loop, wake = self._loop, self._wake
        if loop is not None and wake is not None:
            with contextlib.suppress(RuntimeError):  # the loop has closed
                loop.call_soon_threadsafe(wake.set)

    def handle_exit(self, sig: int, frame: Any) -> None:
        """A signal's stop (a second one forces the exit, as in uvicorn)."""
        super().handle_exit(sig, frame)
        self.stop()

    async def main_loop(self) -> None:
        """uvicorn's loop of ticks, woken early by `stop`."""
        self._loop, self._wake = asyncio.get_running_loop(), asyncio.Event()
        counter = 0
        should_exit = await self.on_tick(counter)
        while not should_exit:
            counter = (counter + 1) % 864000
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(TICK):
                    await self._wake.wait()
            should_exit = await self.on_tick(counter)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        """Stop accepting, close the connections, wait only while some are
        open (or tasks run), then run the app's lifespan shutdown."""
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        state = self.server_state
        for connection in list(state.connections):
            connection.shutdown()
        try:
            async with asyncio.timeout(self.config.timeout_graceful_shutdown):
                # uvicorn tells no one when a connection closes: look, as it does
                while (state.connections or state.tasks) and not self.force_exit:  # noqa: ASYNC110
                    await asyncio.sleep(DRAIN_POLL)
                for server in self.servers:
                    await server.wait_closed()
        except TimeoutError:
            LOGGER.error(
                "Cancel %s running task(s), timeout graceful shutdown exceeded",
                len(state.tasks),
            )
            for task in state.tasks:
                task.cancel(msg="the fake provider is stopping")
        if not self.force_exit:
            await self.lifespan.shutdown()

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


class _NoQueryString(logging.Filter):
    """Leaves the query string out of access-log lines: a client may send
    its API key there (``?key=...``), and the log may end up in a file."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) >= 3 and isinstance(args[2], str):
            record.args = (*args[:2], args[2].split("?", 1)[0], *args[3:])
        return True


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
    access = logging.getLogger("uvicorn.access")
    if not any(isinstance(f, _NoQueryString) for f in access.filters):
        access.addFilter(_NoQueryString())
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
        server.stop()
        thread.join(timeout=10)
        sock.close()
    if failure:
        raise RuntimeError("the fake provider server failed") from failure[0]

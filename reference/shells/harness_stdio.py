"""The stdio shell of the harness adapter: JSON-RPC lines on stdin and stdout.

`serve` runs any `Server` (``reqfold.reference.shells.harness_adapter.HarnessServer`` in
practice) over newline-delimited JSON-RPC 2.0: a reader thread feeds stdin
lines to the event loop, which handles requests strictly in arrival order
and writes every response and notification as one flushed line. The framing
and errors are `reqfold.reference.shells.adapter`'s (parse errors, invalid requests, ids
that cannot be echoed, the line limit, internal errors).

It does not import `reqfold.reference.shells.harness_adapter` (which imports it): the
server is built by the ``make_server`` callback. ``answer`` is looked up
here at each response, so a chaos harness can replace it for the shell.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Callable
from typing import IO, Any, Protocol

from reqfold.reference.json_values import JsonObject, canonical_json
from reqfold.reference.shells.adapter import (
    LineTooLong,
    answer,
    as_rpc_error,
    parse_request,
    read_line,
)

Notify = Callable[[str, JsonObject], None]
"""Sends one notification: ``notify(method, params)``; must not raise."""
Log = Callable[[str], None]
"""Writes one diagnostic (the shell's goes to stderr)."""


class Server(Protocol):
    """What the shell serves: requests answered, then closed once."""

    async def handle(self, method: str, params: JsonObject) -> Any:
        """Answer one request: its result, or raise `adapter.RpcError`."""

    async def close(self) -> None:
        """Release everything; the shell calls it as it stops, even after shutdown."""


MakeServer = Callable[[Notify, Log], Server]
"""Builds the server from the shell's ``notify`` and ``log``."""


class _Output:
    """stdout: whole lines, flushed, one writer; remembers when it is gone."""

    def __init__(self, stdout: IO[bytes], on_lost: Callable[[], None]) -> None:
        self._stdout = stdout
        self._on_lost = on_lost
        self.gone: str | None = None

    def write(self, data: bytes) -> None:
        if self.gone is not None:
            return
        try:
            self._stdout.write(data)
            self._stdout.flush()
        except (OSError, ValueError) as error:
            self.gone = str(error) or type(error).__name__
            self._on_lost()

    def notify(self, method: str, params: JsonObject) -> None:
        message = {"jsonrpc": "2.0", "method": method, "params": params}
        try:
            line = (canonical_json(message) + "\n").encode("utf-8")
        except Exception as error:  # a bug: the notification is not JSON
            _stderr(
                f"reqfold.reference.harness_adapter: cannot send {method}: {error}\n"
            )
            return
        self.write(line)


def _stderr(text: str) -> None:
    try:
        sys.stderr.write(text)
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


_LOST = object()
"""Queued when stdout is gone: nobody can be answered any more."""


def _read_lines(
    stdin: IO[bytes], loop: asyncio.AbstractEventLoop, inbox: asyncio.Queue[object]
) -> None:
    """The reader thread: queue each stdin line, then None at end of input."""
    while True:
        item: object
        try:
            item = read_line(stdin)
        except LineTooLong as too_long:
            item = too_long
        except (OSError, ValueError):
            item = None  # stdin cannot be read: as good as its end
        try:
            loop.call_soon_threadsafe(inbox.put_nowait, item)
        except RuntimeError:  # the event loop is closed: nobody is listening
            return
        if item is None:
            return


async def serve(
    stdin: IO[bytes],
    stdout: IO[bytes],
    *,
    make_server: MakeServer,
) -> int:
    """Serve requests from `stdin` until ``shutdown`` or end of input.

    ``make_server(notify, log)`` builds the server; its notifications go to
    stdout, its diagnostics to stderr. Returns the exit status: 0, or 1
    when stdout can no longer be written.
    """
    inbox: asyncio.Queue[object] = asyncio.Queue()
    output = _Output(stdout, lambda: inbox.put_nowait(_LOST))
    server = make_server(output.notify, _stderr)
    reader = threading.Thread(
        target=_read_lines,
        args=(stdin, asyncio.get_running_loop(), inbox),
        name="harness-adapter-stdin",
        daemon=True,
    )
    reader.start()
    try:
        while (item := await inbox.get()) is not None and item is not _LOST:
            if isinstance(item, LineTooLong):
                output.write(item.response())
            elif (
                isinstance(item, bytes)
                and item.strip()
                and await _serve_line(server, output, item)
            ):
                break
    finally:
        await server.close()
    if output.gone is not None:
        _stderr(
            "reqfold.reference.harness_adapter: "
            f"stdout is gone ({output.gone}); exiting\n"
        )
        return 1
    return 0


async def _serve_line(server: Server, output: _Output, line: bytes) -> bool:
    """Answer one request line; returns whether it was ``shutdown``."""
    request = parse_request(line)
    if isinstance(request, bytes):
        output.write(request)
        return False
    try:
        result = await server.handle(request.method, request.params)
    except Exception as error:  # RpcError, or a bug: say so and keep serving
        reply = answer(request, error=as_rpc_error(error))
    else:
        reply = answer(request, result=result)
    if reply is not None:
        output.write(reply)
    return request.method == "shutdown"

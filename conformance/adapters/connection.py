"""Talking to an implementation: over a child process's pipes, or in-process.

`StdioConnection` runs an adapter command and speaks newline-delimited
JSON-RPC 2.0 with it (docs/adapter-protocol.md): one request at a time,
the echoed ``id`` checked, each response parsed strictly. Nothing the
adapter does can block the suite past ``timeout`` per request or make it
keep unbounded output:

* the request is written without blocking, against the same deadline as
  the answer, so an adapter that stops reading its stdin times out;
* two reader threads keep stdout and stderr drained; stdout lines wait in
  a bounded inbox (a flood of lines nobody asked for is a protocol error),
  stderr keeps only a tail of truncated lines;
* the adapter runs in its own session, and ending it kills the whole
  process group, so a helper it started cannot hold the pipes open; a pipe
  is closed only once its reader thread is done with it.

POSIX only (process groups, non-blocking pipes). `DirectConnection` serves
the same protocol from the in-process reference, for fast runs and for the
suite's own tests.
"""

from __future__ import annotations

import contextlib
import enum
import os
import re
import selectors
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import IO, Any, Protocol

from conformance.codec.corpus import encode_json, load_json
from conformance.errors import (
    AdapterCrashed,
    AdapterError,
    AdapterProtocolError,
    AdapterStartupFailed,
    AdapterTimeout,
    VersionMismatch,
)
from reference.json_values import JsonObject, has_lone_surrogate

PROTOCOL_VERSION = 1
MAX_RESPONSE_BYTES = 64 * 1024 * 1024
MAX_PENDING_LINES = 64
"""stdout lines that may wait unclaimed at once; more is a flood."""
MAX_PENDING_BYTES = MAX_RESPONSE_BYTES
"""Bytes that may wait unclaimed at once (one whole response always fits)."""
MAX_PENDING_NOTIFICATIONS = 10_000
"""Notifications the suite keeps unread at once; more is a flood."""
STDERR_TAIL_LINES = 20
STDERR_LINE_BYTES = 4096
"""A longer stderr line is cut here and marked ``[truncated]``."""
RELEASE_GRACE = 2.0
"""Seconds to wait for both reader threads, in all, once the process group is
dead (they only take longer when a process that left the group holds a pipe)."""

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


class Connection(Protocol):
    """Something that answers adapter-protocol requests."""

    def initialize(self) -> JsonObject:
        """Send ``initialize``; returns its result."""
        ...

    def request(self, method: str, params: JsonObject) -> JsonObject:
        """Send one request; returns the whole response (``result`` or ``error``)."""
        ...

    def close(self) -> None:
        """Send ``shutdown`` if possible and release the implementation."""
        ...


class DirectConnection:
    """The in-process reference behind the `Connection` interface."""

    def __init__(self) -> None:
        from reference import adapter

        self._adapter = adapter

    def initialize(self) -> JsonObject:
        """Initialize the in-process reference."""
        return self._adapter.dispatch(
            "initialize", {"protocolVersion": PROTOCOL_VERSION}
        )

    def request(self, method: str, params: JsonObject) -> JsonObject:
        """Answer one request the way the stdio adapter would."""
        try:
            return {"result": self._adapter.dispatch(method, params)}
        except self._adapter.RpcError as error:
            body: JsonObject = {"code": error.code, "message": error.message}
            if error.data is not None:
                body["data"] = error.data
            return {"error": body}

    def close(self) -> None:
        """Nothing to release."""


class _End(enum.Enum):
    """Why no more lines will come from the adapter's stdout."""

    EOF = "the adapter closed its stdout"
    TOO_LONG = "a line longer than the response limit"
    FLOOD = "too many lines nobody asked for"


class _Inbox:
    """stdout lines waiting for a request to claim them, within limits.

    Lines are claimed in order. A line too long, or more lines (or bytes)
    waiting than a one-request-at-a-time protocol can explain, stops the
    inbox from keeping output: later lines are dropped (the reader thread
    still drains the pipe, so the adapter never blocks on it), and once the
    kept lines are claimed, `take` reports the problem.
    """

    def __init__(self) -> None:
        self._ready = threading.Condition()
        self._lines: deque[bytes] = deque()
        self._bytes = 0
        self._eof = False
        self._problem: _End | None = None

    @property
    def healthy(self) -> bool:
        """False once a limit was broken."""
        return self._problem is None

    def put(self, line: bytes) -> bool:
        """Keep `line` for a request; False when it breaks a limit."""
        with self._ready:
            if len(line) > MAX_RESPONSE_BYTES:
                self._problem = _End.TOO_LONG
            elif self._lines and (
                len(self._lines) >= MAX_PENDING_LINES
                or self._bytes + len(line) > MAX_PENDING_BYTES
            ):
                self._problem = _End.FLOOD
            else:
                self._lines.append(line)
                self._bytes += len(line)
            self._ready.notify_all()
            return self._problem is None

    def finish(self) -> None:
        """The adapter's stdout reached its end."""
        with self._ready:
            self._eof = True
            self._ready.notify_all()

    def unclaimed(self) -> tuple[int, bytes]:
        """How many lines wait (one more if some were dropped), and the first."""
        with self._ready:
            count = len(self._lines) + (self._problem is _End.FLOOD)
            return count, self._lines[0] if self._lines else b""

    def take(self, timeout: float) -> bytes | _End | None:
        """The next line, or why none will come; None when `timeout` passed."""
        with self._ready:
            if not self._ready.wait_for(
                lambda: bool(self._lines) or self._problem is not None or self._eof,
                timeout,
            ):
                return None
            if self._lines:
                line = self._lines.popleft()
                self._bytes -= len(line)
                return line
            return self._problem or _End.EOF


class StdioConnection:
    """An adapter child process spoken to over stdin/stdout.

    Args:
        argv: the command that starts the adapter.
        timeout: seconds each request (writing it and reading the answer)
            may take before the adapter is declared hung and killed.
    """

    def __init__(self, argv: Sequence[str], *, timeout: float = 10.0) -> None:
        self.argv = list(argv)
        self.timeout = timeout
        self._next_id = 0
        self._inbox = _Inbox()
        self._stderr: deque[str] = deque(maxlen=STDERR_TAIL_LINES)
        self._released = False
        self._notifications: deque[JsonObject] = deque()
        try:
            self._process = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as error:
            raise AdapterStartupFailed(
                f"cannot start {' '.join(self.argv)!r}: {error.strerror or error}"
            ) from None
        assert self._process.stdin is not None
        os.set_blocking(self._process.stdin.fileno(), False)
        self._threads = [
            threading.Thread(target=self._pump_stdout, daemon=True),
            threading.Thread(target=self._pump_stderr, daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    # ------------------------------------------------------------ threads

    def _pump_stdout(self) -> None:
        stream = self._process.stdout
        assert stream is not None
        try:
            keeping = True
            while True:
                if keeping:
                    line = stream.readline(MAX_RESPONSE_BYTES + 1)
                    if not line:
                        break
                    keeping = self._inbox.put(line)
                elif not stream.read(1 << 16):
                    break
        except (OSError, ValueError):
            pass
        finally:
            self._inbox.finish()
            self._pump_done(stream)

    def _pump_stderr(self) -> None:
        stream = self._process.stderr
        assert stream is not None
        cut = False  # inside a line already truncated
        try:
            while chunk := stream.readline(STDERR_LINE_BYTES):
                whole = chunk.endswith(b"\n")
                if not cut:
                    text = chunk.decode("utf-8", "replace").rstrip("\r\n")
                    if not whole and len(chunk) == STDERR_LINE_BYTES:
                        text += " [truncated]"
                    self._stderr.append(text)
                cut = not whole
        except (OSError, ValueError):
            pass
        finally:
            self._pump_done(stream)

    def _pump_done(self, stream: IO[bytes]) -> None:
        # Once the connection is released, the last one out closes the pipe.
        if self._released:
            with contextlib.suppress(OSError):
                stream.close()

    # ------------------------------------------------------------ protocol

    @property
    def stderr_tail(self) -> str:
        """The last lines the adapter wrote to stderr (long lines truncated)."""
        return "\n".join(list(self._stderr))

    def initialize(self) -> JsonObject:
        """Send ``initialize``; raises `AdapterStartupFailed` or `VersionMismatch`."""
        try:
            response = self.request("initialize", {"protocolVersion": PROTOCOL_VERSION})
        except AdapterError as error:
            self.kill()
            raise AdapterStartupFailed(
                f"initialize failed: {error.detail}", stderr_tail=self.stderr_tail
            ) from None
        if "error" in response:
            self.kill()
            message = response["error"].get("message", "")
            raise VersionMismatch(
                f"the adapter refused protocol version {PROTOCOL_VERSION}: {message}",
                stderr_tail=self.stderr_tail,
            )
        result = response["result"]
        if not isinstance(result, dict) or not isinstance(
            result.get("revisions"), list
        ):
            self.kill()
            raise AdapterStartupFailed(
                "initialize result must be an object with a revisions array",
                stderr_tail=self.stderr_tail,
            )
        return result

    def request(self, method: str, params: JsonObject) -> JsonObject:
        """Send one request and wait for its response, both within `timeout`.

        Notifications that arrive before the response are kept for
        `receive_notification`, in order.
        """
        if self._released:
            raise AdapterCrashed(
                "the adapter is no longer running", stderr_tail=self.stderr_tail
            )
        deadline = time.monotonic() + self.timeout
        self._drain_notifications(method)
        self._next_id += 1
        request_id = self._next_id
        message = {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": method,
            "params": params,
        }
        self._send(encode_json(message).encode("utf-8") + b"\n", method, deadline)
        while True:
            parsed = self._parse_message(self._receive(method, deadline))
            if _is_notification(parsed):
                self._keep_notification(parsed)
                continue
            return self._check_response(parsed, request_id)

    def receive_notification(self, timeout: float | None = None) -> JsonObject:
        """The next notification the adapter sent (``{method, params}``), in order.

        Waits up to `timeout` (default: the connection's) for one to come.
        Raises `AdapterTimeout` (the adapter is killed), `AdapterCrashed`, or
        `AdapterProtocolError` for a response nobody asked for.
        """
        if self._notifications:
            return self._notifications.popleft()
        if self._released:
            raise AdapterCrashed(
                "the adapter is no longer running", stderr_tail=self.stderr_tail
            )
        wait = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + wait
        parsed = self._parse_message(self._receive(None, deadline, wait))
        if not _is_notification(parsed):
            self.kill()
            raise AdapterProtocolError(
                f"the adapter wrote a line that is not a notification while no"
                f" request was pending: {encode_json(parsed)[:120]!r}",
                stderr_tail=self.stderr_tail,
            )
        return parsed

    def _keep_notification(self, message: JsonObject) -> None:
        """Queue `message` for `receive_notification`, within the limit."""
        if len(self._notifications) >= MAX_PENDING_NOTIFICATIONS:
            self.kill()
            raise AdapterProtocolError(
                f"the adapter sent more than {MAX_PENDING_NOTIFICATIONS}"
                f" notifications the suite had not read yet (the last:"
                f" {encode_json(message)[:120]!r})",
                stderr_tail=self.stderr_tail,
            )
        self._notifications.append(message)

    def drain_notifications(self) -> list[JsonObject]:
        """The notifications that already arrived, without waiting for more.

        Raises `AdapterProtocolError` for a waiting line that is not one.
        """
        if not self._released:
            self._drain_notifications("the end of the scenario")
        drained = list(self._notifications)
        self._notifications.clear()
        return drained

    def _drain_notifications(self, method: str) -> None:
        """Move notifications waiting in the inbox to the queue; refuse other lines."""
        while True:
            waiting, first = self._inbox.unclaimed()
            if not waiting:
                return
            if self._inbox.healthy:
                line = self._inbox.take(0)
                assert isinstance(line, bytes)
                try:
                    parsed: JsonObject | None = self._parse_message(line)
                except AdapterProtocolError:
                    parsed = None
                if parsed is not None and _is_notification(parsed):
                    self._keep_notification(parsed)
                    continue
            self.kill()
            more = "+" if waiting > MAX_PENDING_LINES else ""
            raise AdapterProtocolError(
                f"the adapter wrote {waiting}{more} unsolicited line(s) to stdout"
                f" before {method} was sent, the first: {first[:120]!r}",
                stderr_tail=self.stderr_tail,
            )

    def _send(self, data: bytes, method: str, deadline: float) -> None:
        stdin = self._process.stdin
        assert stdin is not None
        view = memoryview(data)
        selector: selectors.BaseSelector | None = None
        try:
            while view:
                try:
                    view = view[os.write(stdin.fileno(), view) :]
                    continue
                except BlockingIOError:
                    pass
                except (OSError, ValueError):
                    raise self._crashed(
                        "the adapter closed its stdin", deadline
                    ) from None
                if selector is None:
                    selector = selectors.DefaultSelector()
                    selector.register(stdin.fileno(), selectors.EVENT_WRITE)
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not selector.select(remaining):
                    raise self._timed_out(
                        f"could not send {method} within {self.timeout:g}s: the"
                        f" adapter stopped reading its stdin"
                    )
        finally:
            if selector is not None:
                selector.close()

    def _receive(
        self, method: str | None, deadline: float, wait: float | None = None
    ) -> bytes:
        """The next stdout line for a request to `method` (None: a notification)."""
        item = self._inbox.take(max(0.0, deadline - time.monotonic()))
        if item is None:
            seconds = self.timeout if wait is None else wait
            what = "notification" if method is None else f"answer to {method}"
            raise self._timed_out(f"no {what} within {seconds:g}s")
        if item is _End.EOF:
            raise self._crashed(
                "the adapter exited while the suite waited for a notification"
                if method is None
                else f"the adapter exited while answering {method}",
                deadline,
            )
        if item is _End.TOO_LONG:
            self.kill()
            raise AdapterProtocolError(
                f"response line longer than {MAX_RESPONSE_BYTES} bytes",
                stderr_tail=self.stderr_tail,
            )
        if item is _End.FLOOD:
            self.kill()
            raise AdapterProtocolError(
                f"the adapter wrote more than {MAX_PENDING_LINES} unsolicited lines"
                f" (or {MAX_PENDING_BYTES} bytes) to stdout; the rest was dropped",
                stderr_tail=self.stderr_tail,
            )
        assert isinstance(item, bytes)
        return item

    def _parse_message(self, line: bytes) -> JsonObject:
        """One stdout line as a JSON-RPC 2.0 object, strictly parsed.

        A line that is not one breaks the stream: the adapter is killed.
        """

        def invalid(message: str) -> AdapterProtocolError:
            self.kill()
            return AdapterProtocolError(message, stderr_tail=self.stderr_tail)

        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError:
            raise invalid(f"not UTF-8 text: {line[:120]!r}") from None
        try:
            response: Any = load_json(text)
        except (ValueError, RecursionError) as error:
            raise invalid(f"not a JSON line ({error}): {line[:120]!r}") from None
        if _SURROGATE_ESCAPE.search(text) and _holds_lone_surrogate(response):
            raise invalid(
                f"the line holds a string with a lone surrogate, which is not"
                f" Unicode text: {line[:120]!r}"
            )
        if not isinstance(response, dict) or response.get("jsonrpc") != "2.0":
            raise invalid(f"not a JSON-RPC 2.0 message: {line[:120]!r}")
        return response

    def _check_response(self, response: JsonObject, request_id: int) -> JsonObject:
        """`response` if it answers `request_id` with a result or an error.

        Anything else breaks the stream: the adapter is killed.
        """

        def invalid(message: str) -> AdapterProtocolError:
            self.kill()
            return AdapterProtocolError(message, stderr_tail=self.stderr_tail)

        echoed = response.get("id")
        if (
            isinstance(echoed, bool)
            or not isinstance(echoed, int | float)
            or echoed != request_id
        ):
            raise invalid(
                f"response id {echoed!r} does not echo request id {request_id}"
            )
        has_result, body = "result" in response, response.get("error")
        if has_result == (body is not None) or (
            body is not None
            and not (
                isinstance(body, dict)
                and isinstance(body.get("code"), int)
                and not isinstance(body.get("code"), bool)
            )
        ):
            raise invalid(
                "a response needs exactly one of result or error {code, message}"
            )
        return response

    def _timed_out(self, message: str) -> AdapterTimeout:
        code = self._process.poll()
        self.kill()
        if code is None:
            message += "; the adapter was killed"
        else:  # gone, but a process it started still holds its stdout
            message += (
                f"; the adapter had exited (status {code}) but a process it"
                f" started kept its stdout open; its process group was killed"
            )
        return AdapterTimeout(message, stderr_tail=self.stderr_tail)

    def _crashed(self, message: str, deadline: float) -> AdapterCrashed:
        try:
            code = self._process.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            code = None
        # Nothing more can be asked of it: end its helpers too, and let the
        # reader threads finish, so the stderr tail is complete.
        self.kill()
        status = "killed" if code is None else f"exit status {code}"
        return AdapterCrashed(f"{message} ({status})", stderr_tail=self.stderr_tail)

    # ------------------------------------------------------------ lifecycle

    @property
    def alive(self) -> bool:
        """True while the adapter process runs."""
        return self._process.poll() is None

    @property
    def returncode(self) -> int | None:
        """The adapter's exit status once it has been waited for, else None."""
        return self._process.returncode

    def kill(self) -> None:
        """End the adapter and everything it started at once; release the pipes."""
        self._release()

    def close(self) -> None:
        """Ask the adapter to shut down, kill what is left, release the pipes."""
        if self._released:
            return
        try:
            if self.alive and self._inbox.healthy:
                with contextlib.suppress(AdapterError):
                    self.request("shutdown", {})
            if not self._released:
                self._close_stdin()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self._process.wait(timeout=self.timeout)
        finally:
            self._release()

    def _release(self) -> None:
        """Kill the process group, reap the adapter, close the pipes (once)."""
        if self._released:
            return
        self._released = True
        # The adapter leads its own session and process group: killing the
        # group also ends any helper that inherited the pipes. POSIX keeps a
        # group's id from being reused while any member lives.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._process.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            self._process.kill()
        self._process.wait()
        self._close_stdin()
        streams = (self._process.stdout, self._process.stderr)
        deadline = time.monotonic() + RELEASE_GRACE
        for thread, stream in zip(self._threads, streams, strict=True):
            thread.join(timeout=max(0.0, deadline - time.monotonic()))
            # A reader thread may hold the stream's lock in a blocking read
            # (a process outside the group keeps the pipe open): then the
            # thread closes it itself when the read ends (`_pump_done`).
            if not thread.is_alive() and stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()

    def _close_stdin(self) -> None:
        stdin = self._process.stdin
        if stdin is not None and not stdin.closed:
            with contextlib.suppress(OSError, ValueError):
                stdin.close()


def _is_notification(message: JsonObject) -> bool:
    """A JSON-RPC notification: a ``method`` and no ``id`` member."""
    return "id" not in message and isinstance(message.get("method"), str)


def _holds_lone_surrogate(value: Any) -> bool:
    """True when a string (or key) anywhere in `value` has a lone surrogate."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if has_lone_surrogate(item):
                return True
        elif isinstance(item, dict):
            stack.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


ConnectionFactory = Callable[[], Connection]

"""Talking to an implementation over a child process's pipes.

`StdioConnection` runs an adapter command and speaks newline-delimited
JSON-RPC 2.0 with it (docs/adapter-protocol.md): one request at a time,
the echoed ``id`` checked, each response parsed strictly. Nothing the
adapter does can block the suite past ``timeout`` per request or make it
keep unbounded output:

* the request is written without blocking, against the same deadline as
  the answer, so an adapter that stops reading its stdin times out;
* one reader thread keeps stdout and stderr drained; stdout lines wait in
  a bounded inbox (a flood of lines nobody asked for is a protocol error),
  stderr keeps only a tail of truncated lines;
* the reader watches the adapter process too (a pidfd): once it exits,
  what it wrote is read and its stdout counts as ended, even if a helper
  it started still holds the pipe, so a crash is seen at once and the
  reader always finishes;
* ending the adapter kills its whole tree: its process group, and every
  process that left the group but carries its marker or holds its pipes
  (`reqfold.conformance.adapters.process_tree`).

Each line the adapter writes is read strictly (`reqfold.conformance.adapters.wire`);
one that breaks the protocol ends the adapter. POSIX only (process groups,
non-blocking pipes); the tree beyond the process group is found through
Linux's ``/proc``. `Connection` is what every part of the suite talks to;
`reqfold.conformance.adapters.inprocess` serves the same protocol from the
reference in process, for fast runs and for the suite's own tests.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Protocol

from reqfold.conformance.adapters import pipes, process_tree, wire
from reqfold.conformance.adapters.child_env import with_own_python_first
from reqfold.conformance.adapters.pipes import (
    MAX_PENDING_BYTES,
    MAX_PENDING_LINES,
    MAX_RESPONSE_BYTES,
)
from reqfold.conformance.errors import (
    AdapterCrashed,
    AdapterError,
    AdapterProtocolError,
    AdapterStartupFailed,
    AdapterTimeout,
    VersionMismatch,
)
from reqfold.conformance.interrupts import signals_deferred, stop_requested
from reqfold.conformance.json_text.values import encode_json
from reqfold.reference.json_values import JsonObject

PROTOCOL_VERSION = 1
EXIT_GRACE = 2.0
"""Seconds an adapter whose stdout ended has to exit before the suite says
it closed its stdout and kills it (it exits at once when it ended)."""

MAX_PENDING_NOTIFICATIONS = 10_000
"""Notifications the suite keeps unread at once; more is a flood."""
STDERR_TAIL_LINES = 20
EXIT_POLL = 0.05
"""Seconds between looks at the adapter where no pidfd tells of its exit."""
READER_GRACE = 5.0
"""Seconds to wait for the reader thread once the adapter is reaped; it ends
at once then (the adapter's exit ends it), so this only bounds a bug."""


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
        self._inbox = pipes.Inbox()
        self._stderr: deque[str] = deque(maxlen=STDERR_TAIL_LINES)
        self._released = False
        self._notifications: deque[JsonObject] = deque()
        self._mark, value = process_tree.marker()
        try:
            self._process = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                env={**with_own_python_first(os.environ), self._mark: value},
            )
        except OSError as error:
            raise AdapterStartupFailed(
                f"cannot start {' '.join(self.argv)!r}: {error.strerror or error}"
            ) from None
        streams = (self._process.stdin, self._process.stdout, self._process.stderr)
        self._pipes = [process_tree.pipe_inode(s.fileno()) for s in streams if s]
        for stream in streams:
            assert stream is not None
            os.set_blocking(stream.fileno(), False)
        self._exit_fd: int | None = None
        with contextlib.suppress(AttributeError, OSError):  # Linux 5.3+ only
            self._exit_fd = os.pidfd_open(self._process.pid)
        self._held_open = True
        """Whether stdout or stderr may still be held open by some process
        (the reader did not reach both ends)."""
        self._reader = threading.Thread(target=self._read_output, daemon=True)
        self._reader.start()

    # ------------------------------------------------------------ the reader

    def _read_output(self) -> None:
        """Drain stdout and stderr until both end or the adapter exits."""
        out, err = self._process.stdout, self._process.stderr
        assert out is not None
        assert err is not None
        lines = pipes.LineSplitter(self._inbox)
        tail = pipes.TailKeeper(self._stderr)
        sinks = {out.fileno(): lines.feed, err.fileno(): tail.feed}
        selector = selectors.DefaultSelector()
        try:
            for fd in sinks:
                selector.register(fd, selectors.EVENT_READ)
            if self._exit_fd is not None:
                selector.register(self._exit_fd, selectors.EVENT_READ)
            tick = None if self._exit_fd is not None else EXIT_POLL
            while sinks:
                ready = {key.fd for key, _ in selector.select(tick)}
                if self._exit_fd in ready or (
                    tick is not None and self._process.poll() is not None
                ):
                    for fd, feed in list(sinks.items()):
                        if pipes.drain(fd, feed):
                            del sinks[fd]
                    break
                for fd in ready:
                    if fd in sinks and not pipes.read_once(fd, sinks[fd]):
                        selector.unregister(fd)
                        del sinks[fd]
                        if fd == out.fileno():  # no answer can come any more
                            lines.end()
                            self._inbox.finish()
        except (OSError, ValueError):
            pass
        finally:
            self._held_open = bool(sinks)
            selector.close()
            lines.end()
            tail.end()
            self._inbox.finish()

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
            if wire.is_notification(parsed):
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
        if not wire.is_notification(parsed):
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
                if parsed is not None and wire.is_notification(parsed):
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
                        "the adapter closed its stdin",
                        deadline,
                        if_exited="the adapter exited before reading its request",
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
        if item is pipes.End.EOF:
            waiting = (
                "the suite waited for a notification"
                if method is None
                else f"answering {method}"
            )
            # stdout ends as a process exits; one that lives on closed it
            raise self._crashed(
                f"the adapter closed its stdout while {waiting}",
                min(deadline, time.monotonic() + EXIT_GRACE),
                if_exited=f"the adapter exited while {waiting}",
            )
        if item is pipes.End.TOO_LONG:
            self.kill()
            raise AdapterProtocolError(
                f"response line longer than {MAX_RESPONSE_BYTES} bytes",
                stderr_tail=self.stderr_tail,
            )
        if item is pipes.End.FLOOD:
            self.kill()
            raise AdapterProtocolError(
                f"the adapter wrote more than {MAX_PENDING_LINES} unsolicited lines"
                f" (or {MAX_PENDING_BYTES} bytes) to stdout; the rest was dropped",
                stderr_tail=self.stderr_tail,
            )
        assert isinstance(item, bytes)
        return item

    def _parse_message(self, line: bytes) -> JsonObject:
        """One stdout line as a JSON-RPC 2.0 object (`wire.parse_message`).

        A line that is not one breaks the stream: the adapter is killed.
        """
        try:
            return wire.parse_message(line)
        except ValueError as problem:
            raise self._broken(str(problem)) from None

    def _check_response(self, response: JsonObject, request_id: int) -> JsonObject:
        """`response` if it answers `request_id` with a result or an error.

        Anything else breaks the stream: the adapter is killed.
        """
        problem = wire.response_problem(response, request_id)
        if problem is not None:
            raise self._broken(problem)
        return response

    def _broken(self, problem: str) -> AdapterProtocolError:
        self.kill()
        return AdapterProtocolError(problem, stderr_tail=self.stderr_tail)

    def _timed_out(self, message: str) -> AdapterTimeout:
        code = self._process.poll()
        self.kill()
        if code is None:
            message += "; the adapter was killed"
        else:  # it exited just as the time ran out
            message += f"; the adapter had exited (status {code})"
        return AdapterTimeout(message, stderr_tail=self.stderr_tail)

    def _crashed(
        self, message: str, deadline: float, *, if_exited: str | None = None
    ) -> AdapterCrashed:
        """The adapter is gone: `message` (`if_exited` instead when it exited
        on its own), with its exit status, or "killed" if it had to be."""
        try:
            code = self._process.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            code = None
        # Nothing more can be asked of it: end its helpers too, and let the
        # reader threads finish, so the stderr tail is complete.
        self.kill()
        if code is not None and if_exited is not None:
            message = if_exited
        status = "killed" if code is None else f"exit status {code}"
        return AdapterCrashed(f"{message} ({status})", stderr_tail=self.stderr_tail)

    # ------------------------------------------------------------ raw lines

    def send_line(self, line: bytes) -> JsonObject:
        """Write `line` as it is; return the next stdout line, parsed.

        For tests of how an adapter answers bytes no client would send
        (`request` writes only well-formed requests): the answer is parsed
        as a JSON-RPC message but not matched to any request id.
        """
        what = "a raw line"
        deadline = time.monotonic() + self.timeout
        self._send(line + b"\n", what, deadline)
        return self._parse_message(self._receive(what, deadline))

    def end_input(self) -> None:
        """Close the adapter's stdin (end of input) and leave it running."""
        self._close_stdin()

    def wait(self) -> int:
        """The adapter's exit status, once it exits within `timeout`.

        Raises `AdapterTimeout` (the adapter is killed) when it does not.
        """
        try:
            return self._process.wait(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            raise self._timed_out(
                f"the adapter did not exit within {self.timeout:g}s"
            ) from None

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
        """Ask the adapter to shut down, kill what is left, release the pipes.

        When the run is being interrupted (SIGINT, SIGTERM), the adapter is
        killed at once instead: a hung one would hold the exit for a timeout.
        """
        if self._released:
            return
        try:
            if stop_requested() is None and self.alive and self._inbox.healthy:
                with contextlib.suppress(AdapterError):
                    self.request("shutdown", {})
            if not self._released and stop_requested() is None:
                self._close_stdin()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self._process.wait(timeout=self.timeout)
        finally:
            self._release()

    def _release(self) -> None:
        """Kill the adapter's tree, reap it, close the pipes (once).

        Under `reqfold.conformance.interrupts.run_guarded` (every ``reqfold``
        command), SIGINT and SIGTERM wait until this is done
        (`signals_deferred`), so an interrupted run never leaves half a tree
        behind; elsewhere (the pytest plugin) a Ctrl-C may still land here.
        """
        if self._released:
            return
        with signals_deferred():
            self._released = True  # inside: a signal before it leaves it False
            # The adapter leads its own process group; POSIX keeps a group's
            # id from being reused while any member lives.
            process_tree.kill_tree(self._process.pid, self._mark, ())
            with contextlib.suppress(ProcessLookupError):
                self._process.kill()
            self._process.wait()
            self._close_stdin()
            # The adapter is gone, so the reader ends now (see `_read_output`),
            # whatever still holds the pipes.
            self._reader.join(timeout=READER_GRACE)
            if self._held_open:  # look for holders too (slower: every fd)
                process_tree.kill_tree(self._process.pid, self._mark, self._pipes)
            if not self._reader.is_alive():
                for stream in (self._process.stdout, self._process.stderr):
                    if stream is not None:
                        with contextlib.suppress(OSError):
                            stream.close()
                if self._exit_fd is not None:
                    with contextlib.suppress(OSError):
                        os.close(self._exit_fd)

    def _close_stdin(self) -> None:
        stdin = self._process.stdin
        if stdin is not None and not stdin.closed:
            with contextlib.suppress(OSError, ValueError):
                stdin.close()


ConnectionFactory = Callable[[], Connection]

"""Reading an adapter's pipes without trusting it: plain parts the reader
thread of `reqfold.conformance.adapters.connection.StdioConnection` is built from.

* `Inbox`: stdout lines waiting for a request to claim them, bounded in
  count and bytes (a flood of lines nobody asked for is a protocol error);
* `LineSplitter`: chunks into lines, a line past the response limit refused;
* `TailKeeper`: the last lines of stderr, each cut to a bounded length;
* `read_once` and `drain`: one read, or everything left once the adapter
  has exited (bounded, so a helper that keeps writing cannot keep the
  reader busy).
"""

from __future__ import annotations

import enum
import os
import threading
from collections import deque
from collections.abc import Callable

from reqfold.conformance.terminal_text import printable

MAX_RESPONSE_BYTES = 64 * 1024 * 1024
MAX_PENDING_LINES = 64
"""stdout lines that may wait unclaimed at once; more is a flood."""
MAX_PENDING_BYTES = MAX_RESPONSE_BYTES
"""Bytes that may wait unclaimed at once (one whole response always fits)."""
STDERR_LINE_BYTES = 4096
"""A longer stderr line is cut here and marked ``[truncated]``."""
EXIT_DRAIN_BYTES = 4 * 1024 * 1024
"""Bytes read from each pipe once the adapter has exited: more than a pipe
holds, so all it wrote is read, while a helper that keeps writing cannot
keep the reader busy."""


class End(enum.Enum):
    """Why no more lines will come from the adapter's stdout."""

    EOF = "the adapter closed its stdout"
    TOO_LONG = "a line longer than the response limit"
    FLOOD = "too many lines nobody asked for"


class Inbox:
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
        self._problem: End | None = None

    @property
    def healthy(self) -> bool:
        """False once a limit was broken."""
        return self._problem is None

    def put(self, line: bytes) -> bool:
        """Keep `line` for a request; False when it breaks a limit."""
        with self._ready:
            if len(line) > MAX_RESPONSE_BYTES:
                self._problem = End.TOO_LONG
            elif self._lines and (
                len(self._lines) >= MAX_PENDING_LINES
                or self._bytes + len(line) > MAX_PENDING_BYTES
            ):
                self._problem = End.FLOOD
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
            count = len(self._lines) + (self._problem is End.FLOOD)
            return count, self._lines[0] if self._lines else b""

    def take(self, timeout: float) -> bytes | End | None:
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
            return self._problem or End.EOF


class LineSplitter:
    """Cuts stdout chunks into lines for the inbox; once a limit breaks, drops."""

    def __init__(self, inbox: Inbox) -> None:
        self._inbox = inbox
        self._line = bytearray()
        self._keeping = True

    def feed(self, chunk: bytes) -> None:
        """Take one chunk read from stdout."""
        if not self._keeping:
            return
        start = len(self._line)
        self._line += chunk
        while self._keeping:
            end = self._line.find(b"\n", start)
            if end < 0:
                if len(self._line) > MAX_RESPONSE_BYTES:
                    self._put(bytes(self._line))  # too long: the inbox says so
                return
            line = bytes(self._line[: end + 1])
            del self._line[: end + 1]
            start = 0
            self._put(line)

    def end(self) -> None:
        """No more output: a last line without a newline is still a line."""
        if self._keeping and self._line:
            self._put(bytes(self._line))
        self._line.clear()

    def _put(self, line: bytes) -> None:
        self._keeping = self._inbox.put(line)
        if not self._keeping:
            self._line.clear()


class TailKeeper:
    """Keeps the last stderr lines, each cut at `STDERR_LINE_BYTES`."""

    def __init__(self, tail: deque[str]) -> None:
        self._tail = tail
        self._line = bytearray()
        self._cut = False  # inside a line already kept, truncated

    def feed(self, chunk: bytes) -> None:
        """Take one chunk read from stderr."""
        self._line += chunk
        while (end := self._line.find(b"\n")) >= 0:
            if not self._cut:
                self._keep(bytes(self._line[:end]))
            del self._line[: end + 1]
            self._cut = False
        if len(self._line) >= STDERR_LINE_BYTES:
            if not self._cut:
                self._keep(bytes(self._line))
            self._line.clear()
            self._cut = True

    def end(self) -> None:
        """No more output: keep a last line without a newline."""
        if self._line and not self._cut:
            self._keep(bytes(self._line))
        self._line.clear()

    def _keep(self, line: bytes) -> None:
        raw = line[:STDERR_LINE_BYTES].decode("utf-8", "replace").rstrip("\r")
        text = printable(raw)  # shown on terminals and copied into reports
        if len(line) >= STDERR_LINE_BYTES:
            text += " [truncated]"
        self._tail.append(text)


def read_once(fd: int, feed: Callable[[bytes], None]) -> bool:
    """Read what `fd` has; False at its end."""
    try:
        chunk = os.read(fd, 1 << 16)
    except BlockingIOError:
        return True
    if chunk:
        feed(chunk)
    return bool(chunk)


def drain(fd: int, feed: Callable[[bytes], None]) -> bool:
    """Read what is left in `fd` without waiting, up to `EXIT_DRAIN_BYTES`;
    True when its end was reached (nothing else holds the pipe open)."""
    taken = 0
    while taken < EXIT_DRAIN_BYTES:
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            return False
        if not chunk:
            return True
        taken += len(chunk)
        feed(chunk)
    return False

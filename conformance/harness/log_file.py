"""Reading a session log an implementation wrote, in bounded memory.

An implementation chooses its log: an adapter's ``session/open`` answer or
a probed harness's file may name gigabytes, more than memory holds
(docs/benchmarks.md, "Numbers behind the code"). The log rules are checked
streaming, from the file, as ``reqfold check`` does; only a log of at most
`MAX_LOG_IN_MEMORY` bytes and `MAX_LINES_IN_MEMORY` lines is also held
in memory, for the checks that need
its events together (anchor and cache, ``absent``, snapshots). Nothing here
waits on a pipe or a device: those are read as empty.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

MAX_LOG_IN_MEMORY = 64 * 1024 * 1024
"""The largest log held in memory whole: a scenario's log, or a probe's,
from an honest harness holds kilobytes; one turn as large as the fake
provider takes (32 MiB) still fits."""

MAX_LINES_IN_MEMORY = 50_000
"""The most lines of a log held in memory whole: the events of a log are
parsed together, and each costs far more memory than its bytes."""

CHUNK = 1 << 20
"""Bytes read at a time when a log is streamed."""


MAX_TORN_TAIL = 8 * 1024 * 1024
"""The most of a partial last line (no newline) that is checked: it is a
torn tail whatever its length (the checker joins a line's pieces, so a
gigabyte there would cost a gigabyte)."""


@dataclass(frozen=True, slots=True)
class LogRead:
    """What the suite read of a log: its bytes when it is small enough (else
    empty: it is left on disk), and its size either way."""

    data: bytes
    size: int

    @property
    def left_on_disk(self) -> bool:
        """Whether the log is too large to hold in memory."""
        return self.size > 0 and not self.data


def read_log(
    path: Path | str,
    limit: int = MAX_LOG_IN_MEMORY,
    lines: int = MAX_LINES_IN_MEMORY,
) -> LogRead:
    """The log at `path` (`LogRead`); empty when there is no regular file."""
    try:
        if not os.path.isfile(path):
            return LogRead(b"", 0)
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            # a partial last line counts only as far as it is checked
            size = min(size, _after_last_newline(handle, size) + MAX_TORN_TAIL)
            if size > limit:
                return LogRead(b"", size)
            handle.seek(0)
            data = handle.read(size)
    except (OSError, ValueError):
        return LogRead(b"", 0)
    if data.count(b"\n") > lines:
        return LogRead(b"", len(data))
    return LogRead(data, len(data))


def count_lines(path: Path | str) -> int:
    """The complete lines of the log at `path`, counted a chunk at a time."""
    count = 0
    try:
        if not os.path.isfile(path):
            return 0
        with open(path, "rb") as handle:
            while chunk := handle.read(CHUNK):
                count += chunk.count(b"\n")
    except (OSError, ValueError):
        return count
    return count


def log_pieces(
    path: Path | str, piece: int = CHUNK, torn: int = MAX_TORN_TAIL
) -> Iterator[bytes]:
    """The log's lines, each in pieces of at most `piece` bytes (a longer line
    comes in several: `reqfold.conformance.check.check_lines` joins them), read as
    the file was when this started; of a partial last line longer than
    `torn`, only its first `torn` bytes (still a partial line)."""
    with open(path, "rb", buffering=piece) as handle:
        size = os.fstat(handle.fileno()).st_size
        end = min(size, _after_last_newline(handle, size) + torn)
        handle.seek(0)
        left = end
        while left > 0:
            read = handle.readline(min(piece, left))
            if not read:
                return
            left -= len(read)
            yield read


def _after_last_newline(handle: BinaryIO, size: int) -> int:
    """The offset just after the file's last newline (0: none), found by
    reading back from its end a chunk at a time."""
    position = size
    while position > 0:
        start = max(0, position - CHUNK)
        handle.seek(start)
        found = handle.read(position - start).rfind(b"\n")
        if found >= 0:
            return start + found + 1
        position = start
    return 0


def lines_holding(path: Path | str, text: bytes) -> Iterator[int]:
    """The numbers of the log's lines that hold `text`, found a chunk at a
    time (a line of any length; a match across two chunks is found)."""
    if not text:
        return
    number, carry, reported = 1, b"", 0
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK):
            window = carry + chunk
            start = 0
            while (found := window.find(text, start)) >= 0:
                line = number + window.count(b"\n", 0, found)
                if line != reported:
                    reported = line
                    yield line
                start = found + 1
            keep = len(text) - 1
            tail = window[len(window) - keep :] if keep else b""
            number += window.count(b"\n", 0, len(window) - len(tail))
            carry = tail

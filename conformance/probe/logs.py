"""Finding the session log a harness wrote, and watching it grow.

The harness does not say where its log is: the probe looks for a ``.jsonl``
file under ``--log-dir`` (recursively) or matching ``--log-glob`` that
appeared or changed since the process started. `LogWatch` then reads what
is appended, complete lines only, counting events and ended turns.
"""

from __future__ import annotations

import glob
import json
import os
from pathlib import Path

Mark = dict[str, tuple[int, int]]
"""Each candidate file's (size, mtime in ns) at one moment."""


class LogFinder:
    """The candidate logs of one probe: a folder, or a glob pattern."""

    def __init__(self, log_dir: Path | None, pattern: str | None) -> None:
        self.log_dir = log_dir
        self.pattern = pattern

    def describe(self) -> str:
        """Where it looks, for messages."""
        if self.pattern is not None:
            return f"files matching {self.pattern!r}"
        return f"*.jsonl files under {self.log_dir}"

    def candidates(self) -> list[str]:
        """Every file that could be the log, now."""
        if self.pattern is not None:
            found = glob.glob(self.pattern, recursive=True)
        elif self.log_dir is not None and self.log_dir.is_dir():
            found = [str(path) for path in self.log_dir.rglob("*.jsonl")]
        else:
            found = []
        return sorted(path for path in found if os.path.isfile(path))

    def mark(self) -> Mark:
        """The candidates as they are now."""
        marks: Mark = {}
        for path in self.candidates():
            try:
                stat = os.stat(path)
            except OSError:
                continue
            marks[path] = (stat.st_size, stat.st_mtime_ns)
        return marks

    def changed_since(self, before: Mark) -> list[str]:
        """Candidates new or changed since `before`: session files first (their
        first line is a storage line), then most recently changed first."""
        now = self.mark()
        changed = [path for path, state in now.items() if before.get(path) != state]
        return sorted(
            changed, key=lambda path: (not _is_session_file(path), -now[path][1])
        )


LINE_SCAN = 1 << 16
"""Bytes of each line kept to read it (its storage line, a ``turn/end``):
those lines are small; a longer line is counted, not read."""

CHUNK = 1 << 20
"""Bytes read at a time."""


class LogWatch:
    """Reads a growing log: its events, its ended turns, its session id.

    It reads what was appended since the last call, a chunk at a time, and
    keeps no more than the start of the line it is in (`LINE_SCAN`), so a
    log of any size, a partial last line of a gigabyte included, costs the
    probe a few megabytes and is read once.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self.events = 0
        self.turn_ends = 0
        self.session_id: str | None = None
        self._offset = self._lines = 0
        self._line = bytearray()
        """The start of the line being read (at most `LINE_SCAN` bytes)."""

    def refresh(self) -> None:
        """Read what was appended since the last call (complete lines count)."""
        try:
            with open(self.path, "rb") as handle:
                if os.fstat(handle.fileno()).st_size < self._offset:
                    self._restart()  # rewritten from scratch: read it again
                handle.seek(self._offset)
                while chunk := handle.read(CHUNK):
                    self._offset += len(chunk)
                    self._take(chunk)
        except OSError:
            return

    def _take(self, chunk: bytes) -> None:
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            self._keep(chunk[start:end])
            self._line_done()
            start = end + 1
        self._keep(chunk[start:])

    def _keep(self, piece: bytes) -> None:
        room = LINE_SCAN - len(self._line)
        if room > 0:
            self._line += piece[:room]

    def _line_done(self) -> None:
        line, self._line = bytes(self._line), bytearray()
        self._lines += 1
        if self._lines == 1:
            self.session_id = _storage_id(line)
            return
        self.events += 1
        if b"turn/end" in line and _is_turn_end(line):
            self.turn_ends += 1

    def _restart(self) -> None:
        self.events = self.turn_ends = self._offset = self._lines = 0
        self._line = bytearray()
        self.session_id = None


def _is_session_file(path: str) -> bool:
    """Whether the file starts with a storage line (``"type": "session"``)."""
    try:
        with open(path, "rb") as handle:
            first = handle.readline(1 << 16)
    except OSError:
        return False
    try:
        value = json.loads(first)
    except (ValueError, RecursionError):
        return False
    return isinstance(value, dict) and value.get("type") == "session"


def _storage_id(line: bytes) -> str | None:
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if isinstance(value, dict) and isinstance(value.get("id"), str):
        return str(value["id"])
    return None


def _is_turn_end(line: bytes) -> bool:
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return False
    return isinstance(value, dict) and value.get("type") == "turn/end"

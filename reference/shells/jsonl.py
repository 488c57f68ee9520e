"""JSONL persistence of a session log (docs/spec.md "JSONL files", JSONL-*).

A file is a storage line ``{"type": "session", "version": 0, "id", "createdAt",
"cwd"?, "parentSession"?, "seedLength"?, "revision"?}`` followed by one
event per line, each line the canonical JSON text of the event and ``\\n``.

Writing appends whole lines and flushes (optionally fsyncs), so a crash can
leave at most one partial line at the end of the file. Reading tells the two
kinds of damage apart: a partial *final* line is a torn tail
(`LoadedLog.torn_tail`, JSONL-3); anything wrong before it is damage that
would lose data, and loading refuses with the line number (JSONL-4).

This module is the I/O shell around `reqfold.reference.session_log`; it does not
interpret events beyond their envelope.
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reqfold.reference.errors import CodecError, LogDamaged, PersistenceError, TornTail
from reqfold.reference.json_values import (
    JsonObject,
    canonical_json,
    is_integer,
    parse_json,
)
from reqfold.reference.revisions import LATEST, Revision
from reqfold.reference.session_log import SessionLog, check_event

FORMAT_VERSION = 0


def make_storage_line(
    session_id: str,
    created_at: int,
    *,
    cwd: str | None = None,
    parent_session: str | None = None,
    seed_length: int | None = None,
    revision: str | None = None,
) -> JsonObject:
    """Build the first line of a session file (JSONL-1)."""
    line: JsonObject = {
        "type": "session",
        "version": FORMAT_VERSION,
        "id": session_id,
        "createdAt": created_at,
    }
    for key, value in (
        ("cwd", cwd),
        ("parentSession", parent_session),
        ("seedLength", seed_length),
        ("revision", revision),
    ):
        if value is not None:
            line[key] = value
    return line


def check_storage_line(value: object) -> str | None:
    """Return a reason `value` is not a storage line, or None (JSONL-1)."""
    if not isinstance(value, dict):
        return "the first line must be a JSON object"
    if value.get("type") != "session":
        return 'the first line must have "type": "session"'
    if value.get("version") != FORMAT_VERSION or isinstance(value.get("version"), bool):
        return f"unsupported format version {value.get('version')!r} (expected 0)"
    if not isinstance(value.get("id"), str):
        return "the storage line needs a string id"
    if not is_integer(value.get("createdAt")):
        return "the storage line needs an integer createdAt"
    for key in ("cwd", "parentSession"):
        if key in value and not isinstance(value[key], str):
            return f"the storage line's {key} must be a string"
    seed_length = value.get("seedLength", 0)
    if not (is_integer(seed_length) and seed_length >= 0):
        return "the storage line's seedLength must be a non-negative integer"
    revision = value.get("revision", LATEST.value)
    if revision not in {r.value for r in Revision}:
        return f"unknown revision {revision!r} on the storage line"
    return None


def dump_line(value: JsonObject) -> str:
    """One JSONL line: the canonical JSON text and a newline (JSONL-2)."""
    return canonical_json(value) + "\n"


@dataclass(frozen=True, slots=True, kw_only=True)
class TornLine:
    """A partial final line: where it starts and the bytes it holds."""

    line: int
    offset: int
    data: bytes


@dataclass(frozen=True, slots=True, kw_only=True)
class LoadedLog:
    """A session file as read: its storage line, its events, any torn tail."""

    storage: JsonObject
    events: list[JsonObject]
    torn_tail: TornLine | None

    def session(self) -> SessionLog:
        """A `SessionLog` seeded with the loaded events."""
        return SessionLog(
            self.events, revision=Revision(self.storage.get("revision", LATEST.value))
        )


def load_session_file(path: str | os.PathLike[str]) -> LoadedLog:
    """Read a session file; raise `LogDamaged` for damage before the last line."""
    where = os.fspath(path)
    try:
        raw = Path(where).read_bytes()
    except OSError as error:
        raise PersistenceError(f"cannot read: {error.strerror}", path=where) from None
    if not raw:
        raise LogDamaged("the file is empty (no storage line)", path=where, line=1)
    lines = raw.split(b"\n")
    ends_cleanly = lines[-1] == b""
    if ends_cleanly:
        lines.pop()
    torn: TornLine | None = None
    parsed: list[Any] = []
    offset = 0
    for index, chunk in enumerate(lines):
        number = index + 1
        last = index == len(lines) - 1
        try:
            value = parse_json(chunk.decode("utf-8"))
            if index > 0:
                check_event(value, index=index - 1)
        except (ValueError, CodecError) as error:
            if last and not ends_cleanly:
                torn = TornLine(line=number, offset=offset, data=chunk)
                break
            reason = str(error)
            raise LogDamaged(
                f"damaged line: {reason}", path=where, line=number
            ) from None
        if index == 0 and (problem := check_storage_line(value)) is not None:
            raise LogDamaged(problem, path=where, line=1)
        parsed.append(value)
        offset += len(chunk) + 1
    if not parsed:
        raise LogDamaged("no complete storage line", path=where, line=1)
    return LoadedLog(storage=parsed[0], events=parsed[1:], torn_tail=torn)


class JsonlWriter:
    """Appends events to a session file, one flushed line each (JSONL-2).

    Use `create` for a new file and `open` to continue an existing one;
    `open` refuses a file with a torn tail until `cut_torn_tail` has moved
    the partial line aside, so nothing written is ever interleaved with it.
    """

    def __init__(self, path: str, next_seq: int, *, fsync: bool = False) -> None:
        self.path = path
        self.next_seq = next_seq
        self._fsync = fsync

    @classmethod
    def create(
        cls,
        path: str | os.PathLike[str],
        storage: JsonObject,
        events: Iterable[JsonObject] = (),
        *,
        fsync: bool = False,
    ) -> JsonlWriter:
        """Write a new file (storage line and `events`) via a temp file and rename.

        An existing file at `path` is replaced as a whole, atomically; when
        writing fails (a full disk), the temporary file is removed and the
        error raised. A symbolic link is followed: the file it names is
        replaced and the link stays (the writer's `path` is that file's). A
        folder at `path` is refused (`IsADirectoryError`), and so is anything
        else that is not a regular file (a device, a pipe: `OSError`
        EINVAL), which a rename would replace.
        """
        where = os.fspath(path)
        problem = check_storage_line(storage)
        if problem is not None:
            raise ValueError(problem)
        batch = list(events)
        for index, event in enumerate(batch):
            check_event(event, index=index)
        if os.path.isdir(where):
            raise IsADirectoryError(errno.EISDIR, "is a directory", where)
        if os.path.exists(where) and not os.path.isfile(where):
            raise OSError(errno.EINVAL, "is not a regular file", where)
        where = os.path.realpath(where)
        folder, name = os.path.split(where)
        # a new file of a name no one can guess (a link planted at a
        # predictable name would be written through), given the mode the
        # file had, else the one `open` would have given it
        descriptor, temp = tempfile.mkstemp(".tmp", f"{name}.", folder)
        try:
            with open(descriptor, "w", encoding="utf-8", newline="\n") as handle:
                handle.write(dump_line(storage))
                handle.writelines(dump_line(event) for event in batch)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(temp, _mode_for(where))
            os.replace(temp, where)
        except BaseException:
            # A full disk, a folder in the way, an interrupt: the old file (if
            # any) stays whole, and no temporary file is left beside it.
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp)
            raise
        directory = os.open(os.path.dirname(os.path.abspath(where)), os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)
        return cls(where, len(batch), fsync=fsync)

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, fsync: bool = False) -> JsonlWriter:
        """Continue an existing file; raises `TornTail` if it ends mid-line."""
        loaded = load_session_file(path)
        if loaded.torn_tail is not None:
            raise TornTail(
                "the file ends in a partial line; cut_torn_tail() moves it aside",
                path=os.fspath(path),
                line=loaded.torn_tail.line,
            )
        where = os.fspath(path)
        with open(where, "rb") as handle:
            handle.seek(-1, os.SEEK_END)
            complete_but_unterminated = handle.read(1) != b"\n"
        if complete_but_unterminated:
            with open(where, "ab") as handle:
                handle.write(b"\n")
        return cls(where, len(loaded.events), fsync=fsync)

    def append(self, events: Iterable[JsonObject]) -> None:
        """Append events whose seqs continue the file (JSONL-5)."""
        batch = list(events)
        for offset, event in enumerate(batch):
            check_event(event, index=self.next_seq + offset)
        data = memoryview("".join(dump_line(e) for e in batch).encode("utf-8"))
        descriptor = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        try:
            size = os.lseek(descriptor, 0, os.SEEK_END)
            try:
                while data:
                    data = data[os.write(descriptor, data) :]
                if self._fsync:
                    os.fsync(descriptor)
            except BaseException:
                # A partial write (disk full, a size limit) must not stay:
                # the next append would land after it and damage the file.
                os.ftruncate(descriptor, size)
                raise
        finally:
            os.close(descriptor)
        self.next_seq += len(batch)


def _mode_for(where: str) -> int:
    """The mode of the file at `where`, else what `open` gives a new file."""
    try:
        return os.stat(where).st_mode & 0o7777
    except FileNotFoundError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


def cut_torn_tail(path: str | os.PathLike[str]) -> TornLine | None:
    """Move a torn final line to ``PATH.torn`` and truncate it away.

    Returns what was moved, or None when the file ends cleanly. The torn
    bytes are kept beside the log, so even a partial write is not lost.
    """
    where = os.fspath(path)
    loaded = load_session_file(where)
    torn = loaded.torn_tail
    if torn is None:
        return None
    with open(where + ".torn", "ab") as aside:
        aside.write(torn.data)
    with open(where, "r+b") as handle:
        handle.truncate(torn.offset)
    return torn

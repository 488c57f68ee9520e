"""Session files for loop instances: start one, or reopen one to resume.

A thin layer over `reqfold.reference.shells.jsonl`: `create_session_file` writes the
storage line (JSONL-1) and returns an empty `SessionLog` with the writer
that persists every append; `open_session_file` loads a file (refusing a
torn tail, JSONL-5) and returns the seeded log (LOG-6) with a writer that
continues its seqs. A new `AgentLoop` over the returned pair is a resumed
instance: its first request logs a ``resume`` snapshot (WRITER-1) and, in
``session-prefix``, it recomposes the prefix (PREFIX-6). `EventSink` is what
the loop asks of such a writer.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Protocol

from reqfold.reference.json_values import JsonObject
from reqfold.reference.revisions import LATEST, Revision
from reqfold.reference.session_log import SessionLog
from reqfold.reference.shells.jsonl import (
    JsonlWriter,
    load_session_file,
    make_storage_line,
)


def create_session_file(
    path: str | os.PathLike[str],
    *,
    session_id: str,
    created_at: int,
    revision: Revision = LATEST,
) -> tuple[SessionLog, JsonlWriter]:
    """Start a new session file; returns the empty log and its writer."""
    storage = make_storage_line(session_id, created_at, revision=revision.value)
    writer = JsonlWriter.create(path, storage)
    return SessionLog(revision=revision), writer


def open_session_file(
    path: str | os.PathLike[str],
) -> tuple[SessionLog, JsonlWriter]:
    """Reopen a session file to continue it; returns the seeded log and writer."""
    writer = JsonlWriter.open(path)
    return load_session_file(path).session(), writer


class EventSink(Protocol):
    """Where a loop persists its events (the `JsonlWriter` above is one).

    The loop hands the sink a copy of each event *before* logging it: when
    `append` raises, the event is not logged (`PersistenceFailed`), so a
    sink must raise only when it did not persist the event.
    """

    def append(self, events: Sequence[JsonObject], /) -> None:
        """Persist `events`, whose seqs continue the sink's."""

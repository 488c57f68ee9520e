"""Session files for loop instances: start one, or reopen one to resume.

A thin layer over `reference.jsonl`: `create_session_file` writes the
storage line (JSONL-1) and returns an empty `SessionLog` with the writer
that persists every append; `open_session_file` loads a file (refusing a
torn tail, JSONL-5) and returns the seeded log (LOG-6) with a writer that
continues its seqs. A new `AgentLoop` over the returned pair is a resumed
instance: its first request logs a ``resume`` snapshot (WRITER-1) and, in
``session-prefix``, it recomposes the prefix (PREFIX-6).
"""

from __future__ import annotations

import os

from reference.jsonl import JsonlWriter, load_session_file, make_storage_line
from reference.revisions import LATEST, Revision
from reference.session_log import SessionLog


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

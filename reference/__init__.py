"""reqfold's reference implementation of the contract in docs/spec.md.

The codec (`reqfold.reference.header`, `reqfold.reference.writer`) and the session log
(`reqfold.reference.session_log`, `reqfold.reference.messages`) are pure; persistence
(`reference.shells.jsonl`) and the adapters (`reference.shells`) are thin shells.
"""

from reqfold.reference.errors import (
    CodecError,
    DeltaBeforeSnapshot,
    DeltaConflict,
    LogDamaged,
    MalformedDelta,
    MalformedEvent,
    MalformedHeader,
    NotJsonValue,
    PersistenceError,
    SurfaceError,
    TornTail,
)
from reqfold.reference.header import (
    apply_header_delta,
    canonical_header,
    diff_header,
    fold_request_header,
    header_equals,
)
from reqfold.reference.revisions import LATEST, Revision
from reqfold.reference.session_log import SessionLog
from reqfold.reference.writer import record_header

__all__ = [
    "LATEST",
    "CodecError",
    "DeltaBeforeSnapshot",
    "DeltaConflict",
    "LogDamaged",
    "MalformedDelta",
    "MalformedEvent",
    "MalformedHeader",
    "NotJsonValue",
    "PersistenceError",
    "Revision",
    "SessionLog",
    "SurfaceError",
    "TornTail",
    "apply_header_delta",
    "canonical_header",
    "diff_header",
    "fold_request_header",
    "header_equals",
    "record_header",
]

"""The writer logs a change no delta can say (a pure tool reorder) as the delta
``diff`` yields instead of a ``fallback`` snapshot; the log (and the request
built from it) keeps the old order. Caught by ``tool-reorder-between-turns``:
the checker's ``log/WRITER-3`` (a no-op delta) and ``request-1`` [REQ-2]."""

from typing import Any

from reqfold.reference.header import DELTA, diff_header
from reqfold.reference.loop import agent
from reqfold.reference.shells.harness_adapter import main
from reqfold.reference.writer import record_header


def record_header_without_fallback(
    baseline: Any, logged: bool, header: Any, revision: Any
) -> Any:
    event = record_header(baseline, logged, header, revision)
    if event is not None and event["data"].get("reason") == "fallback":
        return {"type": DELTA, "data": diff_header(baseline, header, revision)}
    return event


agent.record_header = record_header_without_fallback
raise SystemExit(main())

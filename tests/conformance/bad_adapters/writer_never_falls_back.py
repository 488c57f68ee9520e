"""Logs every change as a delta, even one that does not round-trip (a tool
reorder), so the log folds to a header that was never sent (breaks
WRITER-4)."""

from typing import Any

from _serve import serve_broken

from reqfold.reference import header, writer
from reqfold.reference.shells import adapter


def record(params: dict[str, Any]) -> dict[str, Any]:
    rev = adapter._revision(params)
    event = writer.record_header(
        params["baseline"], params["loggedThisInstance"], params["header"], rev
    )
    if event is not None and event["data"].get("reason") == "fallback":
        delta = header.diff_header(params["baseline"], params["header"], rev)
        event = {"type": "request/header-delta", "data": delta}
    return {"event": event}


serve_broken({"codec/record": record})

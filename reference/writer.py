"""The writer contract: which header event, if any, a request owes the log.

Implements docs/spec.md section "Writer" (WRITER-1 .. WRITER-5) as a pure
decision. Given the header in force in the log (the *baseline*, or None),
whether this loop instance has already logged a header, and the header the
request will actually carry, exactly one of these happens:

1. the instance's first request: a snapshot, reason ``initial`` when the
   log has no header yet and ``resume`` otherwise, even when unchanged;
2. the header equals the baseline: nothing;
3. the diff round-trips: a ``request/header-delta`` carrying it;
4. otherwise (a tool reorder, a tool inserted mid-list): a ``fallback``
   snapshot.
"""

from __future__ import annotations

from reqfold.reference.header import (
    DELTA,
    SNAPSHOT,
    Header,
    canonical_header,
    delta_round_trips,
    diff_header,
    header_equals,
)
from reqfold.reference.json_values import JsonObject
from reqfold.reference.revisions import LATEST, Revision


def record_header(
    baseline: Header | None,
    logged_this_instance: bool,
    header: Header,
    revision: Revision = LATEST,
) -> JsonObject | None:
    """Decide the header event for one request: ``{type, data}`` or None.

    Implements: WRITER-1, WRITER-2, WRITER-3, WRITER-4, WRITER-5.
    """
    current = canonical_header(header, revision)
    if not logged_this_instance:
        reason = "initial" if baseline is None else "resume"
        return {"type": SNAPSHOT, "data": {"header": current, "reason": reason}}
    if baseline is None:
        raise ValueError("an instance that already logged a header has a baseline")
    if header_equals(baseline, current, revision):
        return None
    delta = diff_header(baseline, current, revision)
    if delta is not None and delta_round_trips(baseline, delta, current, revision):
        return {"type": DELTA, "data": delta}
    return {"type": SNAPSHOT, "data": {"header": current, "reason": "fallback"}}

"""The dev-mode cross-check: every request sent is what the log alone rebuilds.

Implements the loop-side guard of docs/spec.md REQ-1 .. REQ-7 (anchor: the
``invariants`` package's ``llm/stream`` check). Right before dispatch the
loop calls `check_request`: it rebuilds the step's request from a *fresh*
session log seeded with the events strictly before the step's
``step/start`` plus the fold of the header events
(`reqfold.reference.reconstruct.rebuild_step`), and compares header, messages and
the contract members of the wire body with the frozen request, by value and
byte for byte (the canonical text: ``0`` and ``0.0`` are equal values but
different bytes on the wire). Any difference raises `RequestDiverges`
naming the rule; the loop closes the turn and lets it propagate.

The loop runs the check *before* the writer appends the step's header
event, over the log plus that pending event, so a diverging request never
leaves a header event behind, and is never sent.
"""

from __future__ import annotations

from collections.abc import Sequence

from reqfold.reference.json_values import JsonObject, canonical_json, json_equal
from reqfold.reference.loop.errors import RequestDiverges
from reqfold.reference.loop.freeze import is_frozen
from reqfold.reference.loop.frozen_request import FrozenRequest
from reqfold.reference.reconstruct import rebuild_step
from reqfold.reference.request import build_chat_body, contract_view
from reqfold.reference.revisions import Revision

MESSAGE_RULE = {
    Revision.HEADER_EVENTS: "REQ-3",
    Revision.REQUEST_MESSAGES: "REQ-4",
    Revision.SESSION_PREFIX: "REQ-5",
}


def check_request(
    events: Sequence[JsonObject], request: FrozenRequest, revision: Revision
) -> None:
    """Raise `RequestDiverges` unless `request` equals its rebuild from `events`.

    Implements: REQ-1, REQ-2, REQ-3, REQ-4, REQ-5, REQ-6, REQ-7.
    """
    if not (is_frozen(request.header) and is_frozen(request.messages)):
        raise RequestDiverges("the request is not frozen", rule="REQ-7")
    if events[request.boundary]["type"] != "step/start":
        raise RequestDiverges(
            f"seq {request.boundary} is not a step/start boundary", rule="REQ-1"
        )
    header, messages, _ = rebuild_step(events, request.boundary, revision)
    if header is None:
        raise RequestDiverges(
            "no header is in force for this step (no request/header logged)",
            rule="REQ-2",
        )
    sent_header = request.plain_header()
    if not json_equal(sent_header, header):
        raise RequestDiverges(
            "the request's header diverges from the folded log header: sent"
            f" {canonical_json(sent_header)}, log {canonical_json(header)}",
            rule="REQ-2",
        )
    if canonical_json(sent_header) != canonical_json(header):
        raise RequestDiverges(
            "the request's header equals the folded log header by value but not"
            " byte for byte (a number spelled 0 and 0.0?), so the wire body"
            f" differs from the log's: sent {canonical_json(sent_header)}, log"
            f" {canonical_json(header)}",
            rule="REQ-2",
        )
    sent_messages = request.plain_messages()
    if not json_equal(sent_messages, messages) or canonical_json(
        sent_messages
    ) != canonical_json(messages):
        raise RequestDiverges(
            "the request's messages diverge from the boundary derivation"
            f" ({len(sent_messages)} sent, {len(messages)} rebuilt)",
            rule=MESSAGE_RULE[revision],
        )
    sent_body = contract_view(request.body())
    rebuilt_body = contract_view(build_chat_body(header, messages))
    if not json_equal(sent_body, rebuilt_body):
        raise RequestDiverges(
            "the request's wire body diverges from the log's", rule="REQ-6"
        )

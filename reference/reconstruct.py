"""Rebuilding every request from the session log alone (the reconstruction theorem).

Implements the log side of docs/spec.md REQ-1 .. REQ-6 and WIRE-1 .. WIRE-5:
for each step of a log, the request it sent is determined by the log, and
this module computes it without asking the harness anything.

For the step whose ``step/start`` has seq ``s``:

- its messages are the derivation of a *fresh* `SessionLog` seeded with the
  events strictly before ``s`` (REQ-1), framed by the header's
  ``messagePrefix`` (and ``messageSuffix`` in ``request-messages``; REQ-3 ..
  REQ-5);
- its header is the fold of the log up to and including the step's own
  header event, or the header in force at ``s`` when the step has none
  (REQ-2). A step's header event is the one written inside the step before
  its first response event (TURN-3);
- its wire body is `reqfold.reference.request.build_chat_body` of the two (section
  12); only the members the contract determines are compared
  (`reqfold.reference.request.contract_view`).

Whether a step actually reached the provider is not always visible in a
log: a step that failed before dispatch and one whose request was sent and
then aborted mid-flight can look alike. `RebuiltRequest.evidence` says what
the log shows: ``"response"`` (an ``assistant/chunk`` or
``assistant/message`` in the step), ``"provider-error"`` (the turn ended
``error`` at this step with a provider error code, see
`PROVIDER_ERROR_CODES`), ``"header"`` (the step logged its header event but
got no response: the request may have been sent and then aborted, or not
sent at all), or ``"none"``. A step is certainly sent with evidence
``"response"`` or ``"provider-error"``; any other step *may* have been, and
`compare_with_captures` matches it to the next captured request only when
that request equals its rebuild (the same rule as ``reqfold check``,
CHECK-1).

Pure: JSON values in, JSON values out; no clock, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from reqfold.reference.header import (
    DELTA,
    SNAPSHOT,
    Header,
    fold_request_header,
    fold_step,
)
from reqfold.reference.json_values import JsonObject, canonical_json, json_equal
from reqfold.reference.request import build_chat_body, contract_view, request_messages
from reqfold.reference.revisions import LATEST, Revision
from reqfold.reference.session_log import SessionLog
from reqfold.reference.turns import Step, Turns, track

RESPONSE_TYPES = frozenset({"assistant/chunk", "assistant/message"})
HEADER_TYPES = frozenset({SNAPSHOT, DELTA})

PROVIDER_ERROR_CODES = frozenset(
    {
        "AUTH",
        "RATE_LIMIT",
        "INVALID_REQUEST",
        "SERVER",
        "STREAM_CLOSED",
        "MALFORMED_RESPONSE",
        "EMPTY_RESPONSE",
        "NETWORK",
    }
)
"""Error codes a harness records on ``turn/end`` when the provider answered
with an error (or the answer broke off): the request was sent. ``HTTP_<n>``
codes and ``MODEL_STOPPED_*`` codes count too (see `is_provider_error_code`)."""


def is_provider_error_code(code: object) -> bool:
    """True when a ``turn/end`` error code says the request reached the provider."""
    return isinstance(code, str) and (
        code in PROVIDER_ERROR_CODES or code.startswith(("HTTP_", "MODEL_STOPPED"))
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class RebuiltRequest:
    """The request one step sent, as the log alone determines it."""

    turn: int
    step: int
    boundary: int
    """Seq of the step's ``step/start``."""
    header_seq: int | None
    """Seq of the step's own header event, or None when it logged none."""
    header: Header
    messages: list[JsonObject]
    evidence: str
    """``"response"``, ``"provider-error"``, ``"header"`` or ``"none"``
    (module docstring)."""

    @property
    def sent(self) -> bool:
        """Whether the log shows the request certainly reached the provider."""
        return self.evidence in ("response", "provider-error")

    def body(
        self, *, stream: bool = False, settings: JsonObject | None = None
    ) -> JsonObject:
        """The chat-completions body this request maps to (WIRE-1 .. WIRE-5)."""
        return build_chat_body(
            self.header, self.messages, stream=stream, settings=settings
        )

    def contract_body(self) -> JsonObject:
        """The members of the body the log determines (WIRE-5)."""
        return contract_view(self.body())


def rebuild_step(
    events: Sequence[JsonObject], boundary: int, revision: Revision = LATEST
) -> tuple[Header | None, list[JsonObject], int | None]:
    """The header and messages of the step whose ``step/start`` is `boundary`.

    Returns ``(header, messages, header_seq)``; the header is None when no
    header is in force (then the step cannot have sent a request, REQ-2).

    Implements: REQ-1, REQ-2, REQ-3, REQ-4, REQ-5.
    """
    fresh = SessionLog(events[:boundary], revision=revision)
    derived = fresh.derive_messages()
    header = fresh.request_header()
    header_seq: int | None = None
    for event in events[boundary + 1 :]:
        kind = event["type"]
        if kind in RESPONSE_TYPES or kind in ("step/start", "step/end", "turn/end"):
            break
        if kind in HEADER_TYPES:
            header_seq = event["seq"]
    if header_seq is not None:
        header = fold_request_header(
            events[boundary + 1 : header_seq + 1], header, revision
        )
    if header is None:
        return None, derived, None
    return header, request_messages(header, derived, revision), header_seq


def _steps(events: Sequence[JsonObject]) -> Iterator[tuple[int, int, int, str]]:
    """Yield ``(turn, step, boundary, evidence)`` for every step of the log.

    A step is the turn's latest (`reqfold.reference.turns.Turns.latest_step`) until
    the next ``step/start`` or the ``turn/end``: a response logged after
    its ``step/end`` still counts for it.
    """
    turns = Turns()
    steps: dict[int, Step] = {}
    order: list[int] = []
    evidence: dict[int, str] = {}
    for event in events:
        kind = event["type"]
        current = turns.latest_step
        turns = track(turns, event)
        if kind == "step/start":
            step = turns.latest_step
            assert step is not None
            steps[step.boundary] = step
            order.append(step.boundary)
            evidence[step.boundary] = "none"
        elif current is None:
            continue
        elif kind in RESPONSE_TYPES:
            evidence[current.boundary] = "response"
        elif kind in HEADER_TYPES:
            if evidence[current.boundary] == "none":
                evidence[current.boundary] = "header"
        elif kind == "turn/end":
            reason = event["data"].get("reason")
            if (
                isinstance(reason, dict)
                and reason.get("kind") == "error"
                and is_provider_error_code(reason.get("code"))
                and evidence[current.boundary] in ("none", "header")
            ):
                evidence[current.boundary] = "provider-error"
    for boundary in order:
        step = steps[boundary]
        yield step.turn, step.step, boundary, evidence[boundary]


def rebuild_requests(
    events: Sequence[JsonObject], revision: Revision = LATEST
) -> list[RebuiltRequest]:
    """Every step's request, rebuilt from the log alone, in log order.

    Steps without a header in force are skipped (they sent nothing,
    REQ-2). Filter on `RebuiltRequest.sent` to get the requests the log
    shows were dispatched.

    Implements: REQ-1, REQ-2, REQ-3, REQ-4, REQ-5, REQ-6.
    """
    rebuilt: list[RebuiltRequest] = []
    for turn, step, boundary, evidence in _steps(events):
        header, messages, header_seq = rebuild_step(events, boundary, revision)
        if header is None:
            continue
        rebuilt.append(
            RebuiltRequest(
                turn=turn,
                step=step,
                boundary=boundary,
                header_seq=header_seq,
                header=header,
                messages=messages,
                evidence=evidence,
            )
        )
    return rebuilt


def header_events(events: Sequence[JsonObject]) -> list[JsonObject]:
    """The header events of a log, in order."""
    return [event for event in events if event["type"] in HEADER_TYPES]


def fold_through(
    events: Sequence[JsonObject], seq: int, revision: Revision = LATEST
) -> Header | None:
    """The header in force after event `seq` (inclusive)."""
    state: Header | None = None
    for event in events[: seq + 1]:
        state = fold_step(state, event, revision)
    return state


def compare_with_captures(
    events: Sequence[JsonObject],
    bodies: Sequence[JsonObject],
    revision: Revision = LATEST,
) -> list[str]:
    """Check captured wire bodies against the log's rebuilds; return problems.

    `bodies` are the request bodies a provider received for this session,
    in arrival order. Each must equal, member for member and in order
    (JSON-2, JSON-3), the contract members of the body the log rebuilds for
    the corresponding step (WIRE-5: deployment members are ignored): a step
    certainly sent takes the next body; a step that may have been sent
    takes it only when it equals its rebuild (module docstring). Every body
    must be accounted for. An empty list means the theorem holds.

    Implements: REQ-1 .. REQ-6, WIRE-1 .. WIRE-5.
    """
    problems: list[str] = []
    position = 0
    for rebuilt in rebuild_requests(events, revision):
        expected = rebuilt.contract_body()
        body = bodies[position] if position < len(bodies) else None
        where = (
            f"turn {rebuilt.turn}, step {rebuilt.step}, boundary seq {rebuilt.boundary}"
        )
        if not rebuilt.sent:
            if body is not None and json_equal(expected, contract_view(body)):
                position += 1
            continue
        if body is None:
            problems.append(f"the step at {where} was sent, but nothing was captured")
            continue
        position += 1
        actual = contract_view(body)
        if not json_equal(expected, actual):
            problems.append(
                f"request {position - 1} ({where}) differs from its rebuild:\n"
                f"  sent    {canonical_json(actual)[:400]}\n"
                f"  rebuilt {canonical_json(expected)[:400]}"
            )
    if position < len(bodies):
        problems.append(
            f"{len(bodies) - position} captured request(s) match no step of the log"
        )
    return problems

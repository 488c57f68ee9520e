"""The streaming checker: a session file in, findings out, one line at a time.

Implements the log-visible rules of docs/spec.md by driving the rule
machines, one per concern: `envelope_rules` (JSON-1 and JSONL-* through
`lines`, LOG-1 .. LOG-5, LOG-7), `turn_rules` (TURN-1, TURN-2, TURN-4),
`surface_rules` (SURF-1, SURF-2, SURF-4, DERIVE-2), `opening_rules`
(TURN-3, the fold and writer contract through `header_rules`, CACHE-2) and
`request_rules` (REQ-2; with a `Reconstruction`, the reconstruction
theorem).

Theory of operation. `LogChecker.check` is a generator over the lines of a
file that yields `Finding`s as it goes; no input makes it raise (only a
failing read of the file or of the capture does), and an exception inside
a rule becomes an `ERROR` finding at its line (CHECK-2: no verdict, not the
log's fault) and the check goes on. `reader.LineReader` numbers and decodes
the lines and passes over the ``assistant/chunk`` lines of an open step
(most of a real log; no rule reads them beyond the envelope, and the one
rule of a step's first, resolving its request, is applied after it by
`_passed_over`). Every other line is *read* here:

1. *general*: a line msgspec decoded; re-encoded, with the ``data`` the
   rules read decoded, it must give back exactly its own bytes
   (`reqfold.conformance.check.canonical.proven`), else it takes
2. *slow*: `reqfold.conformance.check.lines.explain_line`, which names each problem
   and recovers what it can, so the check goes on after any finding.

The event is then checked by `EnvelopeRules`, and handed to the handlers
registered for its type (`LogChecker.handlers`), in order, each returning
its findings. The machines are built in the order their collaborators
need (the shared `Position` first, `TurnRules` last, given the request
rules' `closed`), each receiving what it needs as constructor arguments.
State is what the rules need and no more: nothing is kept per event, so
memory is bounded by the largest line, header and request, not by the
length of the log; a canonical line is held once
(docs/checker.md, "The bound on one line").
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from reqfold.conformance.check.canonical import (
    RAW,
    UNREAD,
    WHOLE,
    bodies,
    proven,
)
from reqfold.conformance.check.envelope_rules import UNKNOWN_TYPES_KEPT, EnvelopeRules
from reqfold.conformance.check.findings import ERROR, Finding, finding
from reqfold.conformance.check.lines import (
    EVENT_DECODER,
    LONG_INTEGER,
    Envelope,
    Line,
    check_storage_value,
    explain_line,
    has_long_integer,
    is_utf8,
    read_value,
)
from reqfold.conformance.check.opening_rules import OpeningRules
from reqfold.conformance.check.reader import CHUNK, DECODE_ERRORS, LineReader
from reqfold.conformance.check.reconstruction import CaptureUnreadable, Reconstruction
from reqfold.conformance.check.request_rules import RequestRules
from reqfold.conformance.check.revision_inference import (
    RevisionEvidence,
    RevisionRuledOut,
)
from reqfold.conformance.check.surface_rules import COMPACTION_TYPES, SurfaceRules
from reqfold.conformance.check.turn_rules import Position, TurnRules
from reqfold.reference.header import DELTA, SNAPSHOT
from reqfold.reference.json_values import is_integer
from reqfold.reference.messages import SURFACE_TYPES
from reqfold.reference.reconstruct import RESPONSE_TYPES
from reqfold.reference.revisions import ALL_REVISIONS, LATEST, Revision

Handler = Callable[[Envelope, Any, int, int], Sequence[Finding]]
"""A rule machine's handler of one event type: (event, data as an object or
None, line number, seq) to the findings it makes."""

__all__ = ["UNKNOWN_TYPES_KEPT", "Handler", "LogChecker", "LogSummary"]

PASSED_ON = (OSError, CaptureUnreadable, RevisionRuledOut)
"""What a rule may raise that ends the check (not a checker bug, CHECK-2)."""

NOT_A_STORAGE_LINE = (
    "the first line is not a storage line"
    ' {"type": "session", "version": 0, "id", "createdAt"}'
)
"""JSONL-1's finding on a first line that is neither a storage line nor an event."""


@dataclass(slots=True)
class LogSummary:
    """What a check saw besides its findings."""

    lines: int = 0
    events: int = 0
    unknown_types: Counter[str] = field(default_factory=Counter)
    unknown_other: int = 0
    """Events of unknown types beyond the first `UNKNOWN_TYPES_KEPT` types."""
    revision: Revision = LATEST
    revision_source: str = "default"
    steps_dispatched: int = 0
    steps_unrebuilt: int = 0
    """Dispatched steps whose request the log cannot rebuild (header or
    history unknown), so no capture was compared with them."""
    requests_matched: int = 0
    one_shot_requests: list[int] = field(default_factory=list)
    """Indexes of captured requests recognised as no step of the log (a
    compaction summary sent with the session's key: a CHECK-1 warning)."""
    reconstructing: bool = False
    requests_uncompared: Counter[str] = field(default_factory=Counter)
    """Captured requests in other dialects, not compared, by dialect."""


class LogChecker:
    """Checks one session file, streaming.

    Args:
        revision: the revision to read the log under; None takes the storage
            line's ``revision`` member, else ``session-prefix``.
        thorough: decode every event body fully (duplicate keys and number
            ranges inside ``assistant/chunk`` data too); slower.
        reconstruction: compare each dispatched step with the next captured
            request (``--requests``).
        infer: when neither `revision` nor the storage line names one, infer
            it from the header events in this same pass (`RevisionEvidence`,
            docs/checker.md); `check` raises `RevisionRuledOut` when the
            evidence rules out the revision read so far too late to switch.
        overrides: a handler per event type that replaces every rule
            machine's for that type (TURN-4's still runs first): the seam
            for tests that make a rule crash (CHECK-2). Empty in use.
    """

    def __init__(
        self,
        *,
        revision: Revision | None = None,
        thorough: bool = False,
        reconstruction: Reconstruction | None = None,
        infer: bool = False,
        overrides: Mapping[str, Handler] | None = None,
    ) -> None:
        self.summary = LogSummary(reconstructing=reconstruction is not None)
        self._forced_revision = revision
        self.evidence = RevisionEvidence() if infer and revision is None else None
        """What the header events say of the revision, while it is inferred."""
        self._revision_bound = False
        """Whether a header event read so far named a field beyond the ones
        every revision has, so what it was judged to do depends on the
        revision (a switch in place would change it)."""
        self.thorough = thorough
        self.reconstruction = reconstruction
        self.envelope = EnvelopeRules()
        self.position = Position()
        """The open turn and step: `turns` writes it, the others read it."""
        self.opening = OpeningRules(
            self.position,
            revision or LATEST,
            hold_warnings=reconstruction is not None,
        )
        self.surface = SurfaceRules(
            derive=reconstruction is not None, explained=self.opening.explained
        )
        self.requests = RequestRules(
            self.position, self.opening, self.surface.surface, reconstruction
        )
        self.turns = TurnRules(self.position, closing=self.requests.closed)
        self.handlers = self._register(overrides or {})
        """The handlers of each event type, in order."""
        self._unknown: tuple[Handler, ...] = (self.turns.outside,)
        """The handlers of a type no rule machine registered for."""
        self._in_turn = _without(self.handlers, self.turns.outside)
        """`handlers` less TURN-4's, which finds nothing while a turn is open:
        the driver picks these then (no handler opens or closes a turn
        before TURN-4's would run, so the turn open before the event decides)."""
        self._defer_response = not thorough and self._in_turn.get(CHUNK) == (
            self.requests.response,
        )
        """Whether a step's first ``assistant/chunk`` may be passed over and its
        one handler (in an open turn) run after it (`_passed_over`)."""
        self._found: list[Finding] = []
        """What the line being read has shown so far, yielded after it (kept
        when a rule raises: nothing found before the error is lost)."""
        self._bodies = bodies(thorough=thorough, derive=reconstruction is not None)
        """How the general path reads each type's ``data``."""
        self._other_body = WHOLE if thorough else RAW
        """How it reads the ``data`` of a type `_bodies` does not name."""
        self._set_revision(revision or LATEST, "--revision" if revision else "default")

    def _register(
        self, overrides: Mapping[str, Handler]
    ) -> dict[str, tuple[Handler, ...]]:
        turns, opening, requests = self.turns, self.opening, self.requests
        outside = turns.outside
        handlers: dict[str, tuple[Handler, ...]] = dict.fromkeys(
            SURFACE_TYPES, (self.surface.surface_event, outside)
        )
        for kind in COMPACTION_TYPES:
            handlers[kind] = (self.surface.compaction, outside)
        handlers["turn/start"] = (outside, turns.turn_start, opening.turn_start)
        handlers["turn/end"] = (outside, turns.turn_end)
        handlers["step/start"] = (
            (outside, turns.step_start, requests.step_start)
            if self.reconstruction is not None
            else (outside, turns.step_start)  # requests.step_start does nothing
        )
        handlers["step/end"] = (outside, turns.step_end)
        for kind in RESPONSE_TYPES:
            handlers[kind] = (*handlers.get(kind, (outside,)), requests.response)
        handlers[SNAPSHOT] = handlers[DELTA] = (
            (outside, self._revision_evidence, opening.header_event)
            if self.evidence is not None
            else (outside, opening.header_event)
        )
        for kind, replaced in overrides.items():
            handlers[kind] = (outside, replaced)
        return handlers

    def _set_revision(self, revision: Revision, source: str) -> None:
        self.summary.revision = revision
        self.summary.revision_source = source
        self.opening.fold = type(self.opening.fold)(revision)
        if self.reconstruction is not None:
            self.reconstruction.revision = revision

    def _revision_evidence(
        self, event: Envelope, data: Any, number: int, seq: int
    ) -> list[Finding]:
        """Revision inference riding the pass: a header event that rules out
        the revision read so far switches to the one now inferred, before the
        event is folded, when every judgement so far holds under both (no
        header event folded yet, or none named a message field and no request
        was compared); else the log must be read again (`RevisionRuledOut`)."""
        evidence = self.evidence
        if evidence is None:
            return []
        before, bound = evidence.fitting, self._revision_bound
        self._revision_bound = bound or _names_message_fields(event.type, data)
        if not evidence.header_event(event.type, data, number):
            return []
        inference = evidence.inference()
        if inference.revision is self.summary.revision:
            return []
        if self.opening.fold.events_seen and (
            before != ALL_REVISIONS or bound or self.reconstruction is not None
        ):
            raise RevisionRuledOut(inference)
        self.opening.fold.read_as(inference.revision)
        self.summary.revision = inference.revision
        if self.reconstruction is not None:
            self.reconstruction.revision = inference.revision
        return []

    def _fast_ok(self) -> bool:
        """Whether a chunk of the open step may be passed over unread: inside
        an open turn (no TURN-4 finding to make; a step may be opened outside
        one), the step responded or (`_defer_response`) its first response
        may be told after it."""
        step = self.position.step
        return (
            not self.thorough
            and step is not None
            and self.position.turn is not None
            and (step.responded or self._defer_response)
        )

    def _passed_over(self, number: int, seq: int | None, following: int) -> None:
        """The reader passed over chunks from line `number` (seq `seq`) on, up
        to seq `following`: the envelope expects that seq next, with no slack
        left from a damaged line, and if the open step had not responded, the
        first chunk was its first response, whose handlers
        (`requests.first_response` only) run now."""
        self.envelope.next_seq, self.envelope.slack = following, 0
        step = self.position.step
        if step is None or step.responded or seq is None:
            return
        try:
            self._found.extend(self.requests.first_response(step, number, seq))
        except (OSError, CaptureUnreadable):
            raise
        except Exception as error:  # a checker bug must not end the check
            self._found.append(_internal_error(number, error))

    # -------------------------------------------------------------- driving

    def check(self, lines: Iterable[Line]) -> Iterator[Finding]:
        """Check the lines of one session file; yields findings as found."""
        reader = LineReader(lines)
        first = reader.first()
        if first is None:
            yield finding(
                "JSONL-1", 1, None, "the file is empty; it needs a storage line"
            )
            return
        found = self._found
        errors = self._guarded(self._storage_line, 1, first, 1)
        yield from found
        found.clear()
        yield from errors
        envelope = self.envelope
        number = previous = 1
        position, read_line, skipping = self.position, self._line, not self.thorough
        defer = self._defer_response
        reader.expected = set_at = envelope.next_seq if self._fast_ok() else None
        for number, raw, event in reader:
            expected = reader.expected
            if expected is not None and expected != set_at:  # chunks passed over
                self._passed_over(previous + 1, set_at, expected)
            try:
                read_line(raw, number, event)
            except PASSED_ON:
                raise
            except Exception as error:  # a checker bug must not end the check
                # what the line's rules found before it stays, then the error
                found.append(_internal_error(number, error))
                if _header_event(event, raw):
                    # what the header became is unknown, as after a header
                    # event that cannot be folded: judge nothing against it
                    self.opening.lost()
            if found:
                yield from found
                found.clear()
            previous = number
            step = position.step  # `_fast_ok`, inline: this runs on every line
            reader.expected = set_at = (
                envelope.next_seq
                if skipping
                and step is not None
                and position.turn is not None
                and (step.responded or defer)
                else None
            )
        if reader.expected is not None and reader.expected != set_at:
            self._passed_over(previous + 1, set_at, reader.expected)
            yield from found
            found.clear()
        number = reader.lines  # the last line, though the reader passed it over
        summary = self.summary
        summary.lines = number
        summary.events = envelope.events + reader.skipped
        summary.unknown_types = envelope.unknown.counts
        summary.unknown_other = envelope.unknown.other
        if self.evidence is not None:
            summary.revision_source = self.evidence.inference().describe()
        errors = self._guarded(self._finish, number, number)
        yield from found
        found.clear()
        yield from errors

    def _guarded(self, handler: Any, line: int, *args: Any) -> list[Finding]:
        """Run a handler; an unexpected error becomes a checker error (CHECK-2)."""
        try:
            handler(*args)
        except PASSED_ON:
            raise
        except Exception as error:  # a checker bug must not end the check
            return [_internal_error(line, error)]
        return []

    # -------------------------------------------------------------- storage line

    def _storage_line(self, raw: Line, number: int) -> None:
        parsed, findings = read_value(raw, number)
        out = self._found
        out.extend(findings)
        if parsed is None:
            out.append(
                finding(
                    "JSONL-1",
                    number,
                    None,
                    NOT_A_STORAGE_LINE,
                )
            )
            return
        value = parsed.value
        if isinstance(value, dict) and value.get("type") == "session":
            out.extend(check_storage_value(value, number))
            seeded = value.get("seedLength", 0)
            if is_integer(seeded) and seeded >= 0:
                self.requests.seed_length = int(seeded)
            name = value.get("revision")
            if isinstance(name, str):
                self.evidence = None  # declared: nothing to infer
            if isinstance(name, str) and self._forced_revision is None:
                try:
                    self._set_revision(Revision(name), "storage line")
                except ValueError:
                    valid = ", ".join(r.value for r in Revision)
                    out.append(
                        finding(
                            "JSONL-1",
                            number,
                            None,
                            f"unknown revision {name!r} (expected one of: {valid});"
                            f" reading the log as {LATEST.value}",
                        )
                    )
            return
        if isinstance(value, dict) and "seq" in value:
            out.append(
                finding(
                    "JSONL-1",
                    number,
                    None,
                    "the file has no storage line: line 1 holds an event",
                )
            )
            self._line(raw, number, None)
            return
        out.append(
            finding(
                "JSONL-1",
                number,
                None,
                NOT_A_STORAGE_LINE,
                found=value,
            )
        )

    # -------------------------------------------------------------- one line

    def _line(self, raw: Line, number: int, event: Envelope | None) -> None:
        """Read one line (general path, else strict) and check its event; what
        it finds goes to `_found`."""
        if (
            event is not None  # so the line ends in a newline (`LineReader`)
            and (raw.isascii() or is_utf8(raw))
            and (len(raw) < LONG_INTEGER or not has_long_integer(raw))
        ):
            body = self._bodies.get(event.type, self._other_body)
            known: Any = (
                self.opening.fold.known_snapshot(event.data)
                if body is WHOLE and event.type == SNAPSHOT
                else None
            )
            if known is not None:
                # a snapshot of the header in force (a resume that kept its
                # opening) is known by its bytes: no decode, no re-encode;
                # if its envelope is not proven the strict path reads it
                # (`proven` has decoded its surfaceOp in place: not twice)
                read = proven(event, raw, RAW)
                if read:
                    event.data = known
            else:
                read = body is UNREAD or proven(event, raw, body)
            if read:
                if self.envelope.common(event):  # no envelope findings
                    self._handle(event, event.data, number, event.seq)
                else:
                    self._event(event, number, False, True)
                return
        if raw == b"\n":
            self._found.append(
                finding(
                    "JSONL-2", number, None, "an empty line; every line holds one event"
                )
            )
            return
        outcome = explain_line(raw, number)
        self._found.extend(outcome.findings)
        if outcome.envelope is None:
            if outcome.damaged and raw.endswith(b"\n"):
                self.envelope.damaged()
            return
        self._event(outcome.envelope, number, True, outcome.seq_known)

    def _event(
        self, event: Envelope, number: int, prechecked: bool, seq_known: bool
    ) -> None:
        seq, data, findings = self.envelope.check(event, number, prechecked, seq_known)
        if findings:
            self._found.extend(findings)
        self._handle(event, data, number, seq)

    def _handle(self, event: Envelope, data: Any, number: int, seq: int) -> None:
        """Hand the event to its type's handlers, in order."""
        chain = (
            self.handlers.get(event.type, self._unknown)
            if self.position.turn is None
            else self._in_turn.get(event.type, ())
        )
        for handler in chain:
            found = handler(event, data, number, seq)
            if found:
                self._found.extend(found)

    # -------------------------------------------------------------- the end

    def _finish(self, number: int) -> None:
        out = self._found
        out.extend(self.turns.finish(number))
        summary = self.summary
        summary.steps_dispatched = self.requests.dispatched
        summary.steps_unrebuilt = self.requests.unrebuilt
        if self.reconstruction is not None:
            summary.requests_matched = self.reconstruction.matched
            out.extend(self.requests.finish(number))
            summary.requests_matched = self.reconstruction.matched
            summary.one_shot_requests = list(self.reconstruction.one_shot_indices)


def _header_event(event: Envelope | None, raw: Line) -> bool:
    """Whether the line a rule failed on holds a header event (the reader
    gives no envelope for an unterminated last line: it is decoded here)."""
    if event is None and raw[-1:] != b"\n":
        try:
            event = EVENT_DECODER.decode(raw)
        except DECODE_ERRORS:
            return False
    return event is not None and event.type in (SNAPSHOT, DELTA)


NEUTRAL_FIELDS = frozenset({"config", "system", "tools"})
"""The header fields every revision has, read alike under each."""


def _names_message_fields(kind: str, data: Any) -> bool:
    """Whether a header event's fields (a delta's arms, a snapshot's header)
    go beyond `NEUTRAL_FIELDS`, or cannot be told: its judgement may then
    depend on the revision it is read under."""
    fields = data.get("header") if kind == SNAPSHOT and type(data) is dict else data
    return type(fields) is not dict or not NEUTRAL_FIELDS.issuperset(fields)


def _without(
    handlers: dict[str, tuple[Handler, ...]], dropped: Handler
) -> dict[str, tuple[Handler, ...]]:
    """`handlers` with `dropped` taken out of every type's tuple."""
    return {
        kind: tuple(handler for handler in chain if handler != dropped)
        for kind, chain in handlers.items()
    }


def _internal_error(line: int, error: Exception) -> Finding:
    """A bug of ours, not the log's fault: an error (no verdict) at `line`.

    CHECK-2 is the checker's own duty (report every line it cannot check,
    and go on); the finding is no verdict on the log, so it is an `ERROR`,
    never a MUST finding.
    """
    return finding(
        "CHECK-2",
        line,
        None,
        f"the checker could not check this line ({type(error).__name__}:"
        f" {_cut(str(error), 200)}); this is a bug in reqfold, please report it",
        level=ERROR,
    )


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"

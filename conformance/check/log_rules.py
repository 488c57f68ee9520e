"""The streaming rule engine: a session file in, findings out, one line at a time.

Implements the log-visible rules of docs/spec.md: JSON-1, JSONL-1 ..
JSONL-4, LOG-1 .. LOG-5 and LOG-7, SURF-1 .. SURF-4, TURN-1 .. TURN-4,
REQ-2, and (through `HeaderFold`) the fold, the writer contract and the
session prefix; with a `Reconstruction`, the reconstruction theorem.

Theory of operation. `LogChecker.check` is a generator over the lines of a
file (bytes, each ending in ``\\n`` except perhaps the last) that yields
`Finding`s as it goes; no input makes it raise (only a failing read of the
file or of the capture does). State is what the
rules need and no more: the next seq, the open turn and step, the header in
force, the surface as seqs (and, only when rebuilding requests, the derived
messages and the history at the open step's boundary). Nothing is kept per
event, so memory is bounded by the largest line, header and request, not by
the length of the log.

Each line takes one of three paths:

1. *fast*: an ``assistant/chunk`` of a step that already responded, with the
   next seq and a canonical shape, costs one msgspec decode and a few
   comparisons (its ``data`` is never built; see docs/checker.md for what
   that leaves to ``--thorough``);
2. *general*: any other line msgspec decodes; re-encoded, with the
   ``data`` the rules read decoded, it must give back exactly its own bytes
   (no duplicate key, members in order, compact), else it takes
3. *slow*: `conformance.check.lines.explain_line`, which names each problem
   and recovers what it can, so the check goes on after any finding.

A step *dispatches* when it has a header in force and its own header event
or a response event; the request it sent is resolved at its first response
event, or when it closes with a header event but no response.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeGuard

import msgspec
from msgspec import UNSET, Raw

from conformance.check.findings import SHOULD, Finding, finding
from conformance.check.header_rules import HeaderFold
from conformance.check.lines import (
    ENCODER,
    EVENT_DECODER,
    MISSING_DATA,
    VALUE_DECODER,
    Envelope,
    check_storage_value,
    explain_line,
    has_long_integer,
    read_value,
)
from conformance.check.reconstruction import (
    CaptureUnreadable,
    Reconstruction,
    StepPoint,
)
from conformance.check.surface import ReplaceRefused, Surface
from conformance.codec.judge_equal import same_json
from reference.header import DELTA, SNAPSHOT
from reference.json_values import JsonObject, is_integer
from reference.messages import SURFACE_TYPES, derive_event_message
from reference.revisions import LATEST, Revision

RESPONSE_TYPES = frozenset({"assistant/chunk", "assistant/message"})
KNOWN_TYPES = frozenset(
    {
        "turn/start",
        "turn/end",
        "step/start",
        "step/end",
        *SURFACE_TYPES,
        "assistant/chunk",
        "tool/call",
        "prompt/blocked",
        "todo/write",
        SNAPSHOT,
        DELTA,
        "compact/start",
        "compact/summary",
        "compact/end",
        "hook/invoked",
        "hook/result",
    }
)
"""Event types the anchor vocabulary names; any other type is counted (LOG-7)."""

DATA_TYPES = frozenset(
    {"turn/start", "turn/end", "step/start", "step/end", SNAPSHOT, DELTA}
)
"""Event types whose data a rule reads; other bodies stay `msgspec.Raw`
(checked for syntax, NaN/Infinity and UTF-8) unless ``--thorough``. With
``--requests`` the surface types join them, for the derived history."""

UNKNOWN_TYPES_KEPT = 100
"""Distinct unknown event types counted by name; the rest are counted together."""

_DECODE_ERRORS = (msgspec.DecodeError, msgspec.ValidationError, RecursionError)


def _is_int(value: object) -> TypeGuard[int | float]:
    """A JSON integer (JSON-5: ``1.0`` is one too); normalise with int()."""
    return is_integer(value)


@dataclass(slots=True)
class _Step:
    turn: int
    step: int
    line: int
    seq: int
    header_events: int = 0
    responded: bool = False
    resolved: bool = False
    boundary: list[JsonObject] | None = None
    history_unknown: bool = False


OPENING = ("system", "tools", "messagePrefix")
"""The header parts that lead a request's prompt (CACHE-2)."""


@dataclass(frozen=True, slots=True)
class _HeaderChange:
    """A header event of one step, with the header in force before and after."""

    turn: int
    step: int
    kind: str
    data: Any
    before: JsonObject
    after: JsonObject

    def parts(self) -> frozenset[str]:
        """The opening parts this event changed (a delta says so by its arms)."""
        if self.kind == DELTA and isinstance(self.data, dict):
            return frozenset(part for part in OPENING if part in self.data)
        return frozenset(
            part
            for part in OPENING
            if not same_json(self.before.get(part), self.after.get(part))
        )


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
    reconstructing: bool = False

    def count_unknown(self, kind: str) -> None:
        """Count one event of an unknown type, keeping at most so many types."""
        counts = self.unknown_types
        if kind in counts or len(counts) < UNKNOWN_TYPES_KEPT:
            counts[kind] += 1
        else:
            self.unknown_other += 1


class LogChecker:
    """Checks one session file, streaming.

    Args:
        revision: the revision to read the log under; None takes the storage
            line's ``revision`` member, else ``session-prefix``.
        thorough: decode every event body fully (duplicate keys and number
            ranges inside ``assistant/chunk`` data too); slower.
        reconstruction: compare each dispatched step with the next captured
            request (``--requests``).
    """

    def __init__(
        self,
        *,
        revision: Revision | None = None,
        thorough: bool = False,
        reconstruction: Reconstruction | None = None,
    ) -> None:
        self.summary = LogSummary(reconstructing=reconstruction is not None)
        self._forced_revision = revision
        self.thorough = thorough
        self.reconstruction = reconstruction
        self.fold = HeaderFold(revision or LATEST)
        self.surface = Surface(derive=reconstruction is not None)
        self.next_seq = 0
        self.seed_length = 0
        """Events the storage line says were seeded from another session."""
        self.slack = 0
        self.turn: int | None = None
        self.last_turn = 0
        self.last_step = 0
        self.turn_header_events = 0
        self.last_change: _HeaderChange | None = None
        self.step: _Step | None = None
        self.out: list[Finding] = []
        self.events = 0  # events the general and slow paths read
        self._decoded_types = (
            DATA_TYPES | SURFACE_TYPES if reconstruction is not None else DATA_TYPES
        )
        self._set_revision(revision or LATEST, "--revision" if revision else "default")

    def _set_revision(self, revision: Revision, source: str) -> None:
        self.summary.revision = revision
        self.summary.revision_source = source
        self.fold = HeaderFold(revision)
        if self.reconstruction is not None:
            self.reconstruction.revision = revision

    # -------------------------------------------------------------- driving

    def check(self, lines: Iterable[bytes]) -> Iterator[Finding]:
        """Check the lines of one session file; yields findings as found."""
        out = self.out
        it = iter(lines)
        first = next(it, None)
        if first is None:
            yield finding(
                "JSONL-1", 1, None, "the file is empty; it needs a storage line"
            )
            return
        number = 1
        self._guarded(self._storage_line, number, first, number)
        yield from out
        out.clear()
        general = 0  # lines the fast path did not take
        thorough = self.thorough
        decode = EVENT_DECODER.decode
        # `expected` is the next seq while the fast path is open, else None (no
        # seq equals it); `self.next_seq` is authoritative otherwise.
        expected: int | None = self.next_seq if self._fast_ok() else None
        for raw in it:
            number += 1
            try:
                event: Envelope = decode(raw)
            except _DECODE_ERRORS:
                event = _UNREAD
            # The fast path: a chunk of a step that already responded, next in
            # seq, with neither surfaceOp nor sourceEventSeqs (both still the
            # UNSET default, hence the same object), data an object (the line
            # ends "}}"), ASCII or valid UTF-8. Time >= 0 is checked by msgspec.
            if (
                event.seq == expected
                and event.type == "assistant/chunk"
                and event.surfaceOp is event.sourceEventSeqs
                and raw.endswith(b"}}\n")
                and (raw.isascii() or _is_utf8(raw))
            ):
                expected = event.seq + 1
                continue
            general += 1
            if expected is not None:
                self.next_seq = expected
            try:
                self._line(raw, number, None if event is _UNREAD else event, thorough)
            except (OSError, CaptureUnreadable):
                raise
            except Exception as error:  # a checker bug must not end the check
                self._internal_error(number, error)
            if out:
                yield from out
                out.clear()
            expected = self.next_seq if self._fast_ok() else None
        if expected is not None:
            self.next_seq = expected
        self.summary.lines = number
        self.summary.events = self.events + number - 1 - general
        self._guarded(self._finish, number, number)
        yield from out
        out.clear()

    def _fast_ok(self) -> bool:
        step = self.step
        return (
            not self.thorough
            and self.turn is not None
            and step is not None
            and step.responded
        )

    def _guarded(self, handler: Any, line: int, *args: Any) -> None:
        """Run a handler; an unexpected error becomes a CHECK-2 finding."""
        try:
            handler(*args)
        except (OSError, CaptureUnreadable):
            raise
        except Exception as error:  # a checker bug must not end the check
            self._internal_error(line, error)

    def _internal_error(self, line: int, error: Exception) -> None:
        self._report(
            "CHECK-2",
            line,
            None,
            f"the checker failed on this line ({type(error).__name__}: {error});"
            " this is a bug in reqfold, please report it",
        )

    def _report(
        self,
        rule: str,
        line: int,
        seq: int | None,
        message: str,
        *,
        expected: Any = None,
        found: Any = None,
        level: str | None = None,
    ) -> None:
        self.out.append(
            finding(
                rule, line, seq, message, expected=expected, found=found, level=level
            )
        )

    # -------------------------------------------------------------- storage line

    def _storage_line(self, raw: bytes, number: int) -> None:
        parsed, findings = read_value(raw, number)
        self.out.extend(findings)
        if parsed is None:
            self._report(
                "JSONL-1",
                number,
                None,
                "the first line is not a storage line"
                ' {"type": "session", "version": 0, "id", "createdAt"}',
            )
            return
        value = parsed.value
        if isinstance(value, dict) and value.get("type") == "session":
            self.out.extend(check_storage_value(value, number))
            seeded = value.get("seedLength", 0)
            if _is_int(seeded) and seeded >= 0:
                self.seed_length = int(seeded)
            name = value.get("revision")
            if isinstance(name, str) and self._forced_revision is None:
                try:
                    self._set_revision(Revision(name), "storage line")
                except ValueError:
                    valid = ", ".join(r.value for r in Revision)
                    self._report(
                        "JSONL-1",
                        number,
                        None,
                        f"unknown revision {name!r} (expected one of: {valid});"
                        f" reading the log as {LATEST.value}",
                    )
            return
        if isinstance(value, dict) and "seq" in value:
            self._report(
                "JSONL-1",
                number,
                None,
                "the file has no storage line: line 1 holds an event",
            )
            self._line(raw, number, None, self.thorough)
            return
        self._report(
            "JSONL-1",
            number,
            None,
            "the first line is not a storage line"
            ' {"type": "session", "version": 0, "id", "createdAt"}',
            found=value,
        )

    # -------------------------------------------------------------- one line

    def _line(
        self, raw: bytes, number: int, event: Envelope | None, thorough: bool
    ) -> None:
        if (
            event is not None
            and raw.endswith(b"\n")
            and (raw.isascii() or _is_utf8(raw))
            and not has_long_integer(raw)
        ):
            # Re-encoding the event (with ``surfaceOp``, and ``data`` where a rule
            # reads it, decoded) must give back the line exactly: that rules out
            # a duplicate key (the decoded object would be shorter), members out
            # of order and non-compact text, which the slow path tells apart.
            kind = event.type
            if kind == "assistant/chunk" and not thorough:
                self._event(event, number, False, True)
                return
            try:
                if thorough or kind in self._decoded_types:
                    event.data = VALUE_DECODER.decode(event.data)
                if event.surfaceOp is not UNSET:
                    event.surfaceOp = VALUE_DECODER.decode(event.surfaceOp)
            except _DECODE_ERRORS:
                pass
            else:
                encoded = ENCODER.encode(event)
                if len(encoded) + 1 == len(raw) and raw.startswith(encoded):
                    self._event(event, number, False, True)
                    return
        if raw == b"\n":
            self._report(
                "JSONL-2", number, None, "an empty line; every line holds one event"
            )
            return
        outcome = explain_line(raw, number)
        self.out.extend(outcome.findings)
        if outcome.envelope is None:
            if outcome.damaged and raw.endswith(b"\n"):
                self.slack += 1
            return
        self._event(outcome.envelope, number, True, outcome.seq_known)

    def _event(
        self, event: Envelope, number: int, prechecked: bool, seq_known: bool
    ) -> None:
        kind = event.type
        if not seq_known:
            seq = self.next_seq
        else:
            seq = event.seq
            if seq != self.next_seq:
                self._seq(seq, number)
        # a seq that goes back does not move the expected one back (LOG-2
        # is reported once, not again when the log resumes where it was)
        self.next_seq = max(self.next_seq, seq + 1)
        if self.slack:
            self.slack = 0
        self.events += 1
        if not kind and not prechecked:
            self._report("LOG-1", number, seq, "type must be a non-empty string")
        if event.time < 0:
            self._report(
                "LOG-1",
                number,
                seq,
                "time must be a non-negative integer (ms since the epoch)",
                found=event.time,
            )
        data: Any = event.data
        if type(data) is not dict:
            data = self._data(data)
            if data is None and event.data is not MISSING_DATA:
                self._report("LOG-3", number, seq, "data must be a JSON object")
        if kind not in KNOWN_TYPES and kind:
            self.summary.count_unknown(kind)
        if event.sourceEventSeqs is not UNSET:
            self._sources(event, kind, number, seq, prechecked)
        if kind in SURFACE_TYPES:
            self._surface_op(event, kind, data, number, seq)
        elif event.surfaceOp is not UNSET:
            self._report(
                "LOG-4",
                number,
                seq,
                f"{kind} is not a surface type and must not carry surfaceOp",
            )
        if self.turn is None and kind not in ("turn/start", "turn/end") and kind:
            self._report(
                "TURN-4",
                number,
                seq,
                f"{kind} is written outside any open turn",
            )
        handler = _HANDLERS.get(kind)
        if handler is not None:
            handler(self, data, number, seq)

    def _seq(self, seq: int, number: int) -> None:
        expected = self.next_seq
        if seq == expected or (self.slack and expected < seq <= expected + self.slack):
            return
        detail = "repeats or goes back" if seq < expected else "skips ahead"
        self._report(
            "LOG-2",
            number,
            seq,
            f"seq {detail}: seqs run 0, 1, 2, ... without gaps or repeats",
            expected=expected,
            found=seq,
        )

    def _data(self, data: Any) -> Any:
        """The event's data as an object (a lazy Raw stays Raw), or None."""
        if type(data) is Raw:
            return data if bytes(memoryview(data)[:1]) == b"{" else None
        return data if isinstance(data, dict) else None

    def _sources(
        self, event: Envelope, kind: str, number: int, seq: int, prechecked: bool
    ) -> None:
        sources: Any = event.sourceEventSeqs
        if sources is UNSET:
            return
        if kind not in SURFACE_TYPES:
            self._report(
                "LOG-4",
                number,
                seq,
                f"{kind} is not a surface type and must not carry sourceEventSeqs",
            )
        if prechecked:  # any JSON value: check every element's type
            valid = (
                isinstance(sources, list)
                and bool(sources)
                and all(_is_int(s) and 0 <= s < seq for s in sources)
                and len(set(sources)) == len(sources)
            )
        elif not sources:
            valid = False
        elif sources == list(range(sources[0], sources[0] + len(sources))):
            # the common case: the chunks of a message, a run of seqs
            valid = sources[0] >= 0 and sources[-1] < seq
        else:  # msgspec decoded a list of integers (never booleans)
            valid = (
                min(sources) >= 0
                and max(sources) < seq
                and len(set(sources)) == len(sources)
            )
        if not valid:
            self._report(
                "LOG-5",
                number,
                seq,
                "sourceEventSeqs must be a non-empty list of distinct seqs of"
                " earlier events",
                found=sources,
            )

    # -------------------------------------------------------------- surface

    def _surface_op(
        self, event: Envelope, kind: str, data: Any, number: int, seq: int
    ) -> None:
        op: Any = event.surfaceOp
        if op is UNSET:
            self._report("LOG-4", number, seq, f"{kind} must carry surfaceOp")
            return
        if isinstance(op, Raw):
            op = VALUE_DECODER.decode(op)
        message = None
        unknown = False
        if self.surface.derive:
            if isinstance(data, dict):
                problem = _projection_problem(kind, data)
                if problem is None:
                    message = derive_event_message({"type": kind, "data": data})
                else:
                    unknown = True
                    self._report("DERIVE-2", number, seq, problem)
            else:  # reported as LOG-3: what it projects to is unknown
                unknown = True
        if op == "append":
            self.surface.append(seq, message)
            if unknown:
                self.surface.mark_unknown(seq)
            return
        if not (
            isinstance(op, dict)
            and set(op) == {"op", "start", "end"}
            and op["op"] == "replace"
            and _is_int(op["start"])
            and _is_int(op["end"])
        ):
            self._report(
                "SURF-1",
                number,
                seq,
                'surfaceOp must be "append" or {"op": "replace", "start": S,'
                ' "end": E} with integer seqs',
                found=op,
            )
            return
        shadowed = self.surface.shadowed(int(op["start"]), int(op["end"]))
        if isinstance(shadowed, ReplaceRefused):
            self._report("SURF-2", number, seq, shadowed.message, found=op)
            return
        self.surface.replace(seq, shadowed, message)
        if unknown:
            self.surface.mark_unknown(seq)
        sources = event.sourceEventSeqs
        named = set(sources) if isinstance(sources, list) else set()
        missing = [node for node in shadowed if node not in named]
        if missing:
            self._report(
                "SURF-4",
                number,
                seq,
                "a replace's sourceEventSeqs should include every node it shadows",
                expected=shadowed,
                found=sources if isinstance(sources, list) else None,
            )

    # -------------------------------------------------------------- turns, steps

    def _turn_start(self, data: Any, number: int, seq: int) -> None:
        if self.step is not None:
            self._close_step(number)
        turn = data.get("turn") if isinstance(data, dict) else self.last_turn + 1
        if self.turn is not None:
            self._report(
                "TURN-1",
                number,
                seq,
                f"a turn starts while turn {self.turn} is open; turns do not nest",
            )
        if turn != self.last_turn + 1 or not _is_int(turn):
            self._report(
                "TURN-1",
                number,
                seq,
                "turns are numbered from 1, increasing by 1",
                expected=self.last_turn + 1,
                found=turn,
            )
        self.turn = int(turn) if _is_int(turn) else self.last_turn + 1
        self.last_turn = self.turn
        self.last_step = 0
        self.turn_header_events = 0

    def _turn_end(self, data: Any, number: int, seq: int) -> None:
        if self.step is not None:
            self._report(
                "TURN-2",
                number,
                seq,
                f"turn {self.turn} ends while its step {self.step.step} is open",
            )
            self._close_step(number)
        turn = data.get("turn") if isinstance(data, dict) else self.turn
        if self.turn is None:
            self._report("TURN-1", number, seq, "turn/end without an open turn")
        elif turn != self.turn:
            self._report(
                "TURN-1",
                number,
                seq,
                "turn/end names another turn than the open one",
                expected=self.turn,
                found=turn,
            )
        if isinstance(data, dict) and "reason" not in data:
            self._report("TURN-1", number, seq, "turn/end data needs a reason")
        self.turn = None

    def _step_start(self, data: Any, number: int, seq: int) -> None:
        if self.step is not None:
            self._report(
                "TURN-2",
                number,
                seq,
                f"a step starts while step {self.step.step} is open; steps do not nest",
            )
            self._close_step(number)
        # data that is not an object was reported (LOG-1/LOG-3): assume it fits
        fits = not isinstance(data, dict)
        turn = self.turn if fits else data.get("turn")
        step = self.last_step + 1 if fits else data.get("step")
        if self.turn is None:
            self._report("TURN-2", number, seq, "a step starts outside any turn")
        elif turn != self.turn:
            self._report(
                "TURN-2",
                number,
                seq,
                "step/start names another turn than the open one",
                expected=self.turn,
                found=turn,
            )
        if step != self.last_step + 1 or not _is_int(step):
            self._report(
                "TURN-2",
                number,
                seq,
                "steps are numbered from 1 within each turn, increasing by 1",
                expected=self.last_step + 1,
                found=step,
            )
        self.last_step = int(step) if _is_int(step) else self.last_step + 1
        self.step = _Step(
            turn=self.turn or 0, step=self.last_step, line=number, seq=seq
        )
        if self.reconstruction is not None:
            if self.surface.history_unknown:
                self.step.history_unknown = True
            else:
                self.step.boundary = self.surface.messages()

    def _step_end(self, data: Any, number: int, seq: int) -> None:
        if self.step is None:
            self._report("TURN-2", number, seq, "step/end without an open step")
            return
        found = (data.get("turn"), data.get("step")) if isinstance(data, dict) else None
        if found != (self.step.turn, self.step.step):
            self._report(
                "TURN-2",
                number,
                seq,
                "step/end names another step than the open one",
                expected={"turn": self.step.turn, "step": self.step.step},
                found=data,
            )
        self._close_step(number)

    def _close_step(self, number: int) -> None:
        step = self.step
        self.step = None
        if step is not None and not step.resolved:
            # A logged header without a response: the request may have been
            # sent and aborted, or never sent (reconstruct.py, CHECK-1).
            self._dispatch(step, number, certain=False)

    # -------------------------------------------------------------- requests

    def _response(self, data: Any, number: int, seq: int) -> None:
        step = self.step
        if step is None or step.responded:
            return
        step.responded = True
        self._dispatch(step, number, certain=True, seq=seq)

    def _dispatch(
        self, step: _Step, number: int, *, certain: bool, seq: int | None = None
    ) -> None:
        step.resolved = True
        if step.seq < self.seed_length:
            # A seeded step: its request was sent for the session the log
            # was seeded from, not captured for this one (CHECK-1).
            return
        point = StepPoint(turn=step.turn, step=step.step, line=step.line, seq=step.seq)
        header = None if self.fold.unknown else self.fold.state
        if header is None or step.history_unknown:
            if header is None and certain and not self.fold.unknown:
                self._report(
                    "REQ-2",
                    number,
                    seq,
                    f"turn {step.turn} step {step.step} sent a request with no"
                    " header in force (no request/header snapshot before it)",
                )
            if certain:
                # Counted even when the header is unreadable (a log read under
                # the wrong revision): it still sent a request (issue 10.13).
                self.summary.steps_dispatched += 1
                self.summary.steps_unrebuilt += 1
            if certain and self.reconstruction is not None:
                # It sent a request we cannot rebuild: it still takes its
                # capture, so later steps are compared with their own.
                self.reconstruction.skip(point)
            return
        if certain:
            self.summary.steps_dispatched += 1
        if self.reconstruction is not None:
            self.out.extend(
                self.reconstruction.dispatch(
                    point, header, step.boundary or [], certain=certain
                )
            )

    def _header_event(self, data: Any, number: int, seq: int, kind: str) -> None:
        step = self.step
        if step is None:
            self._report(
                "TURN-3",
                number,
                seq,
                "a header event is written outside any open step",
            )
        elif step.responded:
            self._report(
                "TURN-3",
                number,
                seq,
                "a header event comes after its step's first response event",
            )
        if step is not None:
            step.header_events += 1
            if step.header_events > 1:
                self._report(
                    "WRITER-5",
                    number,
                    seq,
                    f"a second header event in turn {step.turn} step {step.step};"
                    " each request appends at most one",
                )
        first_in_turn = self.turn_header_events == 0
        self.turn_header_events += 1
        before = self.fold.state
        if kind == SNAPSHOT:
            self.out.extend(
                self.fold.snapshot(
                    data, line=number, seq=seq, first_in_turn=first_in_turn
                )
            )
        else:
            self.out.extend(self.fold.delta(data, line=number, seq=seq))
        after = self.fold.state
        if step is not None and before is not None and after is not None:
            change = _HeaderChange(step.turn, step.step, kind, data, before, after)
            self._volatile_opening(change, step, number, seq)
        else:
            self.last_change = None

    def _volatile_opening(
        self, change: _HeaderChange, step: _Step, number: int, seq: int
    ) -> None:
        """CACHE-2: one cacheable part changing on consecutive requests of a turn.

        The system prompt, tools and prefix lead every request; when one of
        them changes on two consecutive steps of one turn, something in it
        most likely varies per request (a timestamp, an id, map order), and
        every such request misses the provider's cache from that point.
        Which parts changed is worked out only for such a pair, so the
        common case costs nothing.
        """
        last, self.last_change = self.last_change, change
        if last is None or (last.turn, last.step + 1) != (step.turn, step.step):
            return
        again = sorted(last.parts() & change.parts())
        if again:
            self._report(
                "CACHE-2",
                number,
                seq,
                f"{' and '.join(again)} changed on two consecutive requests of"
                f" turn {step.turn} (steps {step.step - 1} and {step.step}):"
                " does the opening hold a value that varies per request?",
                level=SHOULD,
            )

    def _snapshot(self, data: Any, number: int, seq: int) -> None:
        self._header_event(data, number, seq, SNAPSHOT)

    def _delta(self, data: Any, number: int, seq: int) -> None:
        self._header_event(data, number, seq, DELTA)

    # -------------------------------------------------------------- the end

    def _finish(self, number: int) -> None:
        if self.step is not None:
            self._close_step(number)
        if self.turn is not None:
            self._report(
                "TURN-1",
                number,
                None,
                f"the log ends inside turn {self.turn} (a crash, or a session"
                " still running)",
                level=SHOULD,
            )
        if self.reconstruction is not None:
            self.summary.requests_matched = self.reconstruction.matched
            self.out.extend(self.reconstruction.finish(number))
            self.summary.requests_matched = self.reconstruction.matched


_UNREAD = Envelope(type="", seq=-2, time=0, data=Raw(b"{}"))
"""Stands for a line msgspec could not decode (no seq matches -2)."""


def _projection_problem(kind: str, data: JsonObject) -> str | None:
    """Why a surface event's data has no DERIVE-2 projection, or None.

    The projection carries ``data.content`` into a message, whose content
    is a list of block objects; anything else cannot be rebuilt.
    """
    content = data.get("content", [])
    if isinstance(content, list) and all(type(block) is dict for block in content):
        return None
    return (
        f"{kind} content must be a list of block objects to project to a"
        " message; the derived history is unknown until it leaves the surface"
    )


def _is_utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


_HANDLERS: dict[str, Any] = {
    "turn/start": LogChecker._turn_start,
    "turn/end": LogChecker._turn_end,
    "step/start": LogChecker._step_start,
    "step/end": LogChecker._step_end,
    "assistant/chunk": LogChecker._response,
    "assistant/message": LogChecker._response,
    SNAPSHOT: LogChecker._snapshot,
    DELTA: LogChecker._delta,
}

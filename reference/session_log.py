"""The session log: an append-only list of events, its surface and derivations.

Implements docs/spec.md sections "Log envelope" (LOG-*), "Surface" (SURF-*)
and "Derived history" (DERIVE-1). Pure: no clock (``time`` is an argument
of `SessionLog.append`), no I/O.

An event is ``{"type", "seq", "time", "data", "sourceEventSeqs"?,
"surfaceOp"?}`` with members in that order. ``seq`` is the event's index.
The five surface types carry a ``surfaceOp`` that appends to, or replaces a
range of, the *surface*: the ordered list of seqs whose projections form
the derived history the next request carries.

Derived messages and the header in force are maintained incrementally, so
each appended event costs O(1) amortised (a replace costs O(surface)).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from reqfold.reference.errors import MalformedEvent, SurfaceError
from reqfold.reference.header import Header, fold_step
from reqfold.reference.json_values import (
    JsonObject,
    check_json_value,
    copy_json,
    is_integer,
)
from reqfold.reference.messages import SURFACE_TYPES, derive_event_message
from reqfold.reference.revisions import LATEST, Revision

ENVELOPE_KEYS = ("type", "seq", "time", "data", "sourceEventSeqs", "surfaceOp")


def surface_op_problem(op: object) -> str | None:
    """Why `op` is not a well-formed surface op (SURF-1), or None when it is.

    The result-returning form of `check_surface_op`, for a checker that
    reports a broken rule and goes on.
    """
    if op == "append":
        return None
    if (
        isinstance(op, dict)
        and set(op) == {"op", "start", "end"}
        and op["op"] == "replace"
        and is_integer(op["start"])
        and is_integer(op["end"])
    ):
        return None
    return 'surfaceOp must be "append" or {"op": "replace", "start": int, "end": int}'


def check_surface_op(op: object, *, seq: int | None = None) -> None:
    """Raise `MalformedEvent` unless `op` is a well-formed surface op (SURF-1)."""
    problem = surface_op_problem(op)
    if problem is not None:
        raise MalformedEvent(problem, rule="SURF-1", seq=seq)


def sources_problem(sources: object, seq: int) -> str | None:
    """Why `sources` is not the ``sourceEventSeqs`` of event `seq` (LOG-5), or None.

    They must be a non-empty list of distinct integer seqs of earlier events.
    """
    if (
        isinstance(sources, list)
        and sources
        and all(is_integer(s) and 0 <= s < seq for s in sources)
        and len(set(sources)) == len(sources)
    ):
        return None
    return "sourceEventSeqs must be a non-empty list of distinct earlier seqs"


def check_event(event: object, *, index: int) -> JsonObject:
    """Validate the envelope of the event at position `index` (LOG-1..LOG-5)."""
    if not isinstance(event, dict):
        raise MalformedEvent("an event must be a JSON object", rule="LOG-1", seq=index)
    raw_seq = event.get("seq")
    at = int(raw_seq) if is_integer(raw_seq) else index
    for key in event:
        if key not in ENVELOPE_KEYS:
            raise MalformedEvent(
                f"unknown envelope member {key!r}", rule="LOG-1", seq=at
            )
    kind = event.get("type")
    if not isinstance(kind, str) or not kind:
        raise MalformedEvent("type must be a non-empty string", rule="LOG-1", seq=at)
    # A lone surrogate makes a str that is no JSON string (JSON-1); `data`
    # is checked below, and every other member is a number or a fixed word.
    check_json_value(kind, what="the type", seq=at)
    if not is_integer(raw_seq):
        raise MalformedEvent("seq must be an integer", rule="LOG-1", seq=index)
    seq = int(raw_seq)
    if seq != index:
        raise MalformedEvent(
            f"seq {seq} at position {index}: seqs must run 0, 1, 2, ... without gaps",
            rule="LOG-2",
            seq=seq,
        )
    time = event.get("time")
    if not (is_integer(time) and time >= 0):
        raise MalformedEvent(
            "time must be a non-negative integer (ms)", rule="LOG-1", seq=seq
        )
    data = event.get("data")
    if not isinstance(data, dict):
        raise MalformedEvent("data must be a JSON object", rule="LOG-3", seq=seq)
    check_json_value(data, what="the data", seq=seq)
    _check_surface_members(kind, event, seq)
    return event


def _check_surface_members(kind: str, event: JsonObject, seq: int) -> None:
    if kind in SURFACE_TYPES:
        if "surfaceOp" not in event:
            raise MalformedEvent(f"{kind} must carry surfaceOp", rule="LOG-4", seq=seq)
        check_surface_op(event["surfaceOp"], seq=seq)
    elif "surfaceOp" in event or "sourceEventSeqs" in event:
        raise MalformedEvent(
            f"{kind} is not a surface type and must not carry surfaceOp or"
            " sourceEventSeqs",
            rule="LOG-4",
            seq=seq,
        )
    if "sourceEventSeqs" in event:
        problem = sources_problem(event["sourceEventSeqs"], seq)
        if problem is not None:
            raise MalformedEvent(problem, rule="LOG-5", seq=seq)


def make_event(
    kind: str,
    seq: int,
    time: int,
    data: JsonObject,
    *,
    surface_op: Any = None,
    source_event_seqs: list[int] | None = None,
) -> JsonObject:
    """Build an event with its members in envelope order (LOG-1)."""
    event: JsonObject = {"type": kind, "seq": seq, "time": time, "data": data}
    if source_event_seqs is not None:
        event["sourceEventSeqs"] = list(source_event_seqs)
    if surface_op is not None:
        event["surfaceOp"] = copy_json(surface_op)
    return event


class SessionLog:
    """An append-only session log with its surface, derived history and header.

    Args:
        seed: events to start from (a replay, resume or fork); each is
            validated as if appended (LOG-6).
        revision: the contract revision header events are read under.
    """

    def __init__(
        self, seed: Iterable[JsonObject] = (), *, revision: Revision = LATEST
    ) -> None:
        self.revision = revision
        self._events: list[JsonObject] = []
        self._surface: list[int] = []
        self._projections: dict[int, JsonObject | None] = {}
        self._messages: list[JsonObject] | None = []
        self._header: Header | None = None
        self._header_cursor = 0
        for index, event in enumerate(seed):
            check_json_value(event, what="the seeded event", seq=index)
            self.append_event(copy_json(event))

    # -------------------------------------------------------------- reading

    def __len__(self) -> int:
        return len(self._events)

    def __iter__(self) -> Iterator[JsonObject]:
        return iter(self._events)

    def __getitem__(self, seq: int) -> JsonObject:
        return self._events[seq]

    @property
    def events(self) -> list[JsonObject]:
        """A new list of the logged events (the events themselves are shared)."""
        return list(self._events)

    @property
    def surface(self) -> list[int]:
        """The seqs on the surface, in order (SURF-3)."""
        return list(self._surface)

    def derive_messages(self) -> list[JsonObject]:
        """The derived history: the surface mapped to messages (DERIVE-1)."""
        if self._messages is None:
            self._messages = [
                message
                for seq in self._surface
                if (message := self._projections[seq]) is not None
            ]
        return list(self._messages)

    def request_header(self) -> Header | None:
        """The header in force after the last event (FOLD-1), folded incrementally."""
        while self._header_cursor < len(self._events):
            event = self._events[self._header_cursor]
            self._header = fold_step(self._header, event, self.revision)
            self._header_cursor += 1
        return self._header

    # -------------------------------------------------------------- writing

    def append(
        self,
        kind: str,
        data: JsonObject,
        *,
        time: int,
        surface_op: Any = None,
        source_event_seqs: list[int] | None = None,
    ) -> JsonObject:
        """Append an event built from its parts; returns the logged event.

        `data` is deep-copied, so later changes by the caller do not reach
        the log. Nothing is logged when a rule is broken.
        """
        check_json_value(data, what="the data", seq=len(self._events))
        event = make_event(
            kind,
            len(self._events),
            time,
            copy_json(data),
            surface_op=surface_op,
            source_event_seqs=source_event_seqs,
        )
        return self.append_event(event)

    def check_append(self, event: JsonObject) -> tuple[int, int] | None:
        """Raise unless `event` could be appended now; nothing changes.

        Runs every check `append_event` runs (LOG-1 .. LOG-5, SURF-2), so a
        caller can persist an event before logging it and know the log will
        take it. Returns a replace's surface positions (start, end), else None.
        """
        check_event(event, index=len(self._events))
        op = event.get("surfaceOp")
        if event["type"] not in SURFACE_TYPES or not isinstance(op, dict):
            return None
        seq = int(event["seq"])  # JSON-5: a seq logged as 2.0 is named 2
        start, end = op["start"], op["end"]
        positions = {node: index for index, node in enumerate(self._surface)}
        for name, node in (("start", start), ("end", end)):
            if node not in positions:
                raise SurfaceError(
                    f"replace {name} seq {node} is not on the surface",
                    rule="SURF-2",
                    seq=seq,
                )
        if positions[start] > positions[end]:
            raise SurfaceError(
                f"replace start seq {start} sits after end seq {end} on the surface",
                rule="SURF-2",
                seq=seq,
            )
        return positions[start], positions[end]

    def append_event(self, event: JsonObject) -> JsonObject:
        """Append a complete event (its seq must be the log's length)."""
        replaced = self.check_append(event)
        if event["type"] in SURFACE_TYPES:
            self._apply_surface_op(event, replaced)
        self._events.append(event)
        return event

    def _apply_surface_op(
        self, event: JsonObject, replaced: tuple[int, int] | None
    ) -> None:
        seq = int(event["seq"])
        projection = derive_event_message(event)
        self._projections[seq] = projection
        if replaced is None:
            self._surface.append(seq)
            if self._messages is not None and projection is not None:
                self._messages.append(projection)
            return
        first, last = replaced
        self._surface[first : last + 1] = [seq]
        self._messages = None

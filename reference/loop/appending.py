"""Appending to an instance's session: validate, persist, log, then notify.

The loop's second invariant lives here: *the file and the in-memory log
agree*. `SessionAppender.commit` checks an event (JSON-1, then the
envelope and a replace's range, LOG-1 .. LOG-5 and SURF-2) before the sink
sees it, hands the sink a copy, and logs the event in memory only once the
sink took it; a sink failure raises `PersistenceFailed` with nothing logged.
`SessionAppender.notify` then calls the session-event listeners
synchronously, in order, each with the same deep-frozen copy, so the
session's own events are never reachable through the loop (REQ-7).

The appender also folds each logged event into `reqfold.reference.turns`, so
`SessionAppender.turns` always says where the log stands.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from reqfold.reference.json_values import (
    JsonObject,
    check_json_value,
    copy_json,
    escape_lone_surrogates,
)
from reqfold.reference.loop.clock import Clock
from reqfold.reference.loop.contexts import EventListener
from reqfold.reference.loop.errors import ListenerCancelled, PersistenceFailed
from reqfold.reference.loop.freeze import FrozenObject, deep_freeze
from reqfold.reference.loop.persistence import EventSink
from reqfold.reference.session_log import SessionLog, make_event
from reqfold.reference.turns import Turns, track


class SessionAppender:
    """Appends events to `session`, persisting each to `sink` first.

    Args:
        session: the in-memory log (a resume passes a seeded one).
        sink: where events are persisted before they are logged, or None.
        clock: the time of each event, in integer milliseconds.
        listeners: the session-event listeners, called in list order (the
            loop's `Hooks.session_event`, shared, so later registrations
            count).
    """

    def __init__(
        self,
        session: SessionLog,
        sink: EventSink | None,
        clock: Clock,
        listeners: Sequence[EventListener],
    ) -> None:
        self.session = session
        self.sink = sink
        self.clock = clock
        self.listeners = listeners
        self.turns = Turns()
        """Where the log stands in its turns and steps."""
        for event in session:
            self.turns = track(self.turns, event)

    def append(
        self,
        kind: str,
        data: JsonObject,
        *,
        surface_op: Any = None,
        source_event_seqs: list[int] | None = None,
    ) -> FrozenObject:
        """`commit` the event, then `notify` its listeners; the first failure
        propagates (the event stays logged)."""
        event = self.commit(
            kind, data, surface_op=surface_op, source_event_seqs=source_event_seqs
        )
        self.notify(event)
        return event

    def commit(
        self,
        kind: str,
        data: JsonObject,
        *,
        surface_op: Any = None,
        source_event_seqs: list[int] | None = None,
    ) -> FrozenObject:
        """Validate, persist, then log one event; return a frozen copy of it."""
        seq = len(self.session)
        check_json_value(data, what=f"data of seq {seq}", seq=seq)
        event = make_event(
            kind,
            seq,
            self.clock(),
            copy_json(data),
            surface_op=surface_op,
            source_event_seqs=source_event_seqs,
        )
        self.session.check_append(event)
        frozen: FrozenObject = deep_freeze(event)
        if self.sink is not None:
            try:
                self.sink.append([copy_json(event)])
            except Exception as error:
                detail = escape_lone_surrogates(f"{type(error).__name__}: {error}")
                raise PersistenceFailed(
                    f"could not persist seq {seq} ({kind}) to the session file,"
                    f" so it was not logged: {detail}"
                ) from error
        self.session.append_event(event)
        self.turns = track(self.turns, event)
        return frozen

    def notify(self, event: FrozenObject) -> None:
        """Call the listeners in order; the first failure propagates.

        A listener is synchronous, so a CancelledError it raises is its own
        doing, never the cancellation of the running task: it becomes
        `ListenerCancelled`, an ordinary listener error.
        """
        for listener in list(self.listeners):
            try:
                listener(event)
            except asyncio.CancelledError as error:
                raise ListenerCancelled(
                    f"a session-event listener raised CancelledError on"
                    f" {event['type']} (seq {event['seq']})"
                ) from error

    def notify_quietly(self, event: FrozenObject) -> Exception | None:
        """`notify`, returning the failure instead of raising it."""
        try:
            self.notify(event)
        except Exception as error:
            return error
        return None

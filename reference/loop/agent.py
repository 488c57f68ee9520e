"""The agent loop: turns and steps over one session log, one instance at a time.

Implements docs/spec.md sections 8 to 11 (TURN-*, REQ-*, RMSG-*, PREFIX-*)
on top of the pure codec (`reference.header`, `reference.writer`) and the
session log (`reference.session_log`). docs/reference-harness.md walks
through it with the demo's log.

Theory of operation. An `AgentLoop` is one *instance* over a session: it
owns the writer's per-instance state (has it logged a header yet?) and, in
the ``session-prefix`` revision, the cached session prefix. A process
restart, a resume or a fork is a new `AgentLoop` over the same log. The
loop runs exactly one revision, chosen when it is built.

`AgentLoop.send` runs one turn: ``turn/start``, ``user/message``, then
steps until the model stops calling tools, then ``turn/end`` with its
reason. `AgentLoop._step` is the whole order of operations of one step, top
to bottom, with the rule each line obeys; read it first. Everything a
request carries comes from the log: the messages are derived from the
events strictly before the step's ``step/start`` (REQ-1), the header is the
header in force once the writer's event is logged (REQ-2), and the dev
invariant rebuilds both from a fresh log before every dispatch.

Two invariants hold whatever listeners, sinks and cancels do:

- *A logged header event means a request was started.* Everything that
  may stop a step (the dev invariant, dispatch observers, a cancel) runs
  before the writer appends the header event; once it is appended the
  provider call always starts, and a cancel, a dispose or a failing
  listener of the header event aborts it in flight.
- *The file and the in-memory log agree.* Every append goes through
  `AgentLoop.append`, which validates the event, stamps the clock's time,
  persists it to the sink (a JSONL file) and only then logs it in memory;
  a sink failure logs nothing (`PersistenceFailed`). Then it notifies
  session-event listeners synchronously, so a listener reacting to
  ``step/start`` runs before the loop's next line (and its appends land
  after the boundary). Listeners, sinks and callers get deep-frozen
  copies: the session's own events are never reachable through the loop
  (REQ-7).

Seams (`Hooks`), with the dispatch semantics of `reference.loop.waterfall`:

==================  ==========  =====================================  ==========
seam                kind        seed / context                         revisions
==================  ==========  =====================================  ==========
system-prompt       waterfall   `Assembly` (system text, tool names)   all
session-prefix      waterfall   ``()`` frozen; `PrefixContext`         session-prefix
pre-step            serial      `PreStepContext` (system, prefix)      all
request             waterfall   frozen config; `RequestContext`        all
request-messages    waterfall   `Framing` ``((), ())``                 request-messages
dispatch            serial      `DispatchContext` (the frozen request) all
post-execute        serial      `PostExecuteContext` -> extra context  all
==================  ==========  =====================================  ==========
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from reference.errors import NotJsonValue
from reference.header import Header, canonical_header, check_header, fold_step
from reference.json_values import (
    JsonObject,
    check_json_value,
    copy_json,
    is_integer,
    json_equal,
)
from reference.loop.abort import AbortSignal
from reference.loop.clock import Clock, wall_clock
from reference.loop.errors import (
    AgentError,
    ListenerCancelled,
    LoopDisposed,
    NoModel,
    PersistenceFailed,
    RequestDiverges,
)
from reference.loop.freeze import FrozenObject, deep_freeze, thaw
from reference.loop.frozen_request import FrozenRequest
from reference.loop.invariant import check_request
from reference.loop.provider import Provider, ProviderReply
from reference.loop.tools import (
    Content,
    PostExecuteContext,
    Tool,
    ToolContext,
    ToolResult,
    content_blocks,
)
from reference.loop.waterfall import SerialHook, Waterfall
from reference.request import request_messages
from reference.revisions import ALL_REVISIONS, LATEST, Revision
from reference.session_log import SessionLog, make_event
from reference.writer import record_header

USER_SOURCE: JsonObject = {"kind": "user"}
POST_EXECUTE_SOURCE: JsonObject = {"kind": "plugin", "plugin": "post-execute"}

EventListener = Callable[[FrozenObject], None]
"""A session-event listener: called with a deep-frozen copy of each event."""

ENDED = {"aborted": "aborted", "disposed": "disposed", "interrupted": "interrupted"}
"""How an unanswered tool call's error result names the turn's end."""


class EventSink:
    """Where logged events are persisted (a `reference.jsonl.JsonlWriter` fits).

    The loop hands the sink a copy of each event *before* logging it: when
    `append` raises, the event is not logged (`PersistenceFailed`), so a
    sink must raise only when it did not persist the event.
    """

    def append(self, events: Sequence[JsonObject]) -> None:  # pragma: no cover
        """Persist `events`, whose seqs continue the sink's."""
        raise NotImplementedError


# ------------------------------------------------------------------ contexts


@dataclass(frozen=True, slots=True, kw_only=True)
class Assembly:
    """The system-prompt waterfall's value: the prompt text and the tool names.

    ``tools`` lists registered tool names in the order the header records
    them (TOOLS-1, EQ-3). The seed uses the loop's ``tool_order`` when set,
    else names sorted lexicographically, never registration order.
    """

    system: str
    tools: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class AssembleContext:
    """What a system-prompt listener knows."""

    loop: AgentLoop
    turn: int
    step: int


@dataclass(frozen=True, slots=True, kw_only=True)
class PrefixContext:
    """What a session-prefix listener knows; honour `signal` in slow work."""

    loop: AgentLoop
    turn: int
    signal: AbortSignal


@dataclass(frozen=True, slots=True, kw_only=True)
class PreStepContext:
    """What a pre-step listener knows (compaction counts `session_prefix`)."""

    loop: AgentLoop
    turn: int
    step: int
    system: str
    session_prefix: tuple[FrozenObject, ...]
    signal: AbortSignal


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestContext:
    """What a request-config listener knows."""

    loop: AgentLoop
    turn: int
    step: int
    signal: AbortSignal


@dataclass(frozen=True, slots=True, kw_only=True)
class Framing:
    """The request-messages waterfall's value: messages before and after."""

    before: Sequence[Mapping[str, Any]] = ()
    after: Sequence[Mapping[str, Any]] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestMessagesContext:
    """What a request-messages listener knows: read-only request facts."""

    loop: AgentLoop
    turn: int
    step: int
    system: str
    boundary_messages: tuple[FrozenObject, ...]
    signal: AbortSignal


@dataclass(frozen=True, slots=True, kw_only=True)
class DispatchContext:
    """What a dispatch listener sees: the frozen request about to be sent.

    Dispatch listeners run before the step's header event is logged: one
    that raises, cancels or disposes ends the step with nothing logged for
    the request and nothing sent.
    """

    loop: AgentLoop
    request: FrozenRequest
    signal: AbortSignal


PrefixValue = Sequence[Mapping[str, Any]]
ConfigValue = Mapping[str, Any]


class Hooks:
    """The loop's seams; a seam absent from the revision refuses listeners."""

    def __init__(self, revision: Revision) -> None:
        every = ALL_REVISIONS
        self.system_prompt: Waterfall[AssembleContext, Assembly] = Waterfall(
            "system-prompt", every, revision
        )
        self.session_prefix: Waterfall[PrefixContext, PrefixValue] = Waterfall(
            "session-prefix", (Revision.SESSION_PREFIX,), revision
        )
        self.pre_step: SerialHook[PreStepContext, None] = SerialHook(
            "pre-step", every, revision
        )
        self.request: Waterfall[RequestContext, ConfigValue] = Waterfall(
            "request", every, revision
        )
        self.request_messages: Waterfall[RequestMessagesContext, Framing] = Waterfall(
            "request-messages", (Revision.REQUEST_MESSAGES,), revision
        )
        self.dispatch: SerialHook[DispatchContext, None] = SerialHook(
            "dispatch", every, revision
        )
        self.post_execute: SerialHook[PostExecuteContext, Content | None] = SerialHook(
            "post-execute", every, revision
        )
        self.session_event: list[EventListener] = []


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnResult:
    """How a turn ended: its number, the ``turn/end`` reason, its steps.

    `error` is the exception that ended the turn, if one did (also when a
    listener raised after a cancel and the turn ended ``aborted``).
    """

    turn: int
    reason: JsonObject
    steps: int
    error: BaseException | None = field(default=None, compare=False)

    @property
    def kind(self) -> str:
        """The reason's kind: completed, aborted, disposed, error, max-tokens."""
        kind: str = self.reason["kind"]
        return kind


class _TurnEnd(Exception):
    """Internal: a checkpoint found the turn interrupted."""

    def __init__(self, reason: JsonObject) -> None:
        super().__init__(reason["kind"])
        self.reason = reason


@dataclass(slots=True)
class _Unanswered:
    """Internal: a tool call of the open step that has no ``tool/result`` yet."""

    turn: int
    step: int
    call_id: Any
    source: int
    """Seq of the event holding the call: the assistant message, then its
    ``tool/call`` once the call started."""
    started: bool = False


def _task_cancelled() -> bool:
    """Whether the running task was cancelled (not a CancelledError raised by hand)."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


def _loggable(text: str) -> str:
    """`text` with lone surrogates escaped, so it can be logged (JSON-1)."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _as_int(value: Any) -> Any:
    """An integral number as an `int` (JSON-5: ``1.0`` is 1); else unchanged."""
    return int(value) if is_integer(value) else value


# ---------------------------------------------------------------------- loop


class AgentLoop:
    """One loop instance over a session log.

    Args:
        provider: answers frozen requests (`ChatCompletionsClient`).
        model: the model of the instance's first request, when `config`
            is not given.
        config: the whole config of the instance's first request (must
            have a ``model``, possibly filled by a request listener). Later
            requests start from the folded header's config (anchor 4.4).
        system: the system prompt the system-prompt waterfall starts from;
            may be changed between turns.
        tools: the tools the loop can run.
        tool_order: the order of tool names in the header; default sorted.
        revision: the contract revision this instance runs.
        clock: returns the time of each event in integer milliseconds.
        session: the log to continue (a resume); a fresh one by default.
        sink: where appended events are persisted (a `JsonlWriter`),
            before they are logged in memory.
        check_requests: run the dev-mode invariant before every dispatch.
        max_steps: the most steps one turn may take.
    """

    def __init__(
        self,
        *,
        provider: Provider,
        model: str = "",
        config: Mapping[str, Any] | None = None,
        system: str = "",
        tools: Sequence[Tool] = (),
        tool_order: Sequence[str] | None = None,
        revision: Revision = LATEST,
        clock: Clock = wall_clock,
        session: SessionLog | None = None,
        sink: Any = None,
        check_requests: bool = True,
        max_steps: int = 16,
    ) -> None:
        self.revision = revision
        self.session = session if session is not None else SessionLog(revision=revision)
        if self.session.revision is not revision:
            raise ValueError(
                f"the session is read as {self.session.revision.value},"
                f" the loop runs {revision.value}"
            )
        self.provider = provider
        self.config: JsonObject = thaw(config) if config else {"model": model}
        self.system = system
        self.tools: dict[str, Tool] = {tool.name: tool for tool in tools}
        self.tool_order = list(tool_order) if tool_order is not None else None
        self.hooks = Hooks(revision)
        self.check_requests = check_requests
        self.max_steps = max_steps
        self.requests: list[FrozenRequest] = []
        """Every request this instance dispatched, in order."""
        self.replies: list[ProviderReply] = []
        self.compositions = 0
        """How many times this instance ran the session-prefix waterfall."""
        self._clock = clock
        self._sink = sink
        self._logged_header = False
        self._prefix: tuple[FrozenObject, ...] | None = None
        self._lock = asyncio.Lock()
        self._signal: AbortSignal | None = None
        self._running = False
        self._cancel: tuple[str | None] | None = None
        self._disposed = False
        self._last_turn = 0
        self._open_turn: int | None = None
        self._open_step: tuple[int, int] | None = None
        self._stranded: JsonObject | None = None
        """The end reason of a turn whose closing events the sink refused."""
        self._unanswered: list[_Unanswered] = []
        for event in self.session:
            self._track(event)
        self._repair_open_turn()

    # ------------------------------------------------------------ public API

    @property
    def session_prefix(self) -> tuple[FrozenObject, ...] | None:
        """The cached, frozen session prefix, or None before composition."""
        return self._prefix

    @property
    def disposed(self) -> bool:
        """Whether `dispose` has been called."""
        return self._disposed

    @property
    def last_turn(self) -> int:
        """The number of the last turn started in the log (0 when none)."""
        return self._last_turn

    def on_event(self, listener: EventListener) -> Callable[[], None]:
        """Call `listener(event)` synchronously after each append; returns a remover.

        The event is already persisted and logged; the listener gets a
        deep-frozen copy (changing it raises `TypeError`). A listener that
        raises fails the running turn (``error``, or ``aborted``/``disposed``
        after a cancel or dispose); one on the step's header event does so
        only after the request was started, aborting it in flight.
        """
        self.hooks.session_event.append(listener)

        def remove() -> None:
            if listener in self.hooks.session_event:
                self.hooks.session_event.remove(listener)

        return remove

    async def send(
        self, content: Content, *, source: Mapping[str, Any] | None = None
    ) -> TurnResult:
        """Run one turn for a user message; turns queue behind each other.

        Raises:
            LoopDisposed: the instance was disposed.
            RequestDiverges: the dev invariant caught a request that differs
                from its log rebuild. It is raised before the step's header
                event is logged (nothing was sent), and after the turn was
                closed.
            PersistenceFailed: the sink refused even the events closing the
                turn; the turn stays open (in the file as in memory) and the
                instance's next turn closes it first. A sink failure inside
                the turn just ends it ``error`` (code ``PERSISTENCE_FAILED``).
            asyncio.CancelledError: only when the caller's task was
                cancelled (the turn is closed ``aborted`` first); a listener
                raising CancelledError is a listener error.
        """
        blocks = content_blocks(content)
        origin = dict(source) if source is not None else dict(USER_SOURCE)
        async with self._lock:
            if self._disposed:
                raise LoopDisposed("the loop instance was disposed")
            return await self._run_turn(blocks, origin)

    def cancel(self, reason: str | None = None) -> None:
        """Abort the running turn (no effect while idle); it ends ``aborted``."""
        if not self._running:
            return
        if self._cancel is None:
            self._cancel = (reason,)
        if self._signal is not None:
            self._signal.abort(reason)

    def dispose(self) -> None:
        """End this instance: a running turn ends ``disposed``; no more turns."""
        self._disposed = True
        if self._signal is not None:
            self._signal.abort("disposed")

    def inject(
        self, content: Content, *, source: Mapping[str, Any] | None = None
    ) -> FrozenObject:
        """Log a durable ``context/message``; returns a frozen copy of it.

        Inside an open turn it joins the turn (and the next request built
        after it). While idle it is wrapped in a one-shot turn
        (``trigger.kind: "injection"``, ending ``completed``) that never
        calls the model (TURN-4).

        Raises:
            LoopDisposed: the instance was disposed (nothing is logged).
            PersistenceFailed: the sink refused the event; nothing is logged.
        """
        if self._disposed:
            raise LoopDisposed("the loop instance was disposed")
        blocks = content_blocks(content)
        origin = dict(source) if source is not None else dict(USER_SOURCE)
        data = {"content": blocks, "source": origin}
        if self._open_turn is not None and self._stranded is None:
            return self.append("context/message", data, surface_op="append")
        self._repair_open_turn()
        turn = self._last_turn + 1
        trigger = {"kind": "injection", "source": origin}
        start = self._commit("turn/start", {"turn": turn, "trigger": trigger})
        failure = self._notify_quietly(start)
        event: FrozenObject | None = None
        if failure is None:
            try:
                event = self.append("context/message", data, surface_op="append")
            except Exception as error:
                failure = error
        reason: JsonObject = {"kind": "completed"}
        if failure is not None:
            reason = self._failure_reason(failure, 0)
        late = self._finish_turn(turn, reason)
        if failure is not None:
            raise failure
        if late is not None:
            raise late
        assert event is not None
        return event

    def append(
        self,
        kind: str,
        data: JsonObject,
        *,
        surface_op: Any = None,
        source_event_seqs: list[int] | None = None,
    ) -> FrozenObject:
        """Append an event at the clock's time: persist it, log it, notify listeners.

        The sink takes the event before the log does, and the log takes it
        only if the sink did, so the file and the log never disagree: a sink
        failure raises `PersistenceFailed` with nothing logged. The event is
        in the log before any listener runs, so a listener that raises
        leaves it logged. Listeners and the caller get the same deep-frozen
        copy of the event; the log's own event is never handed out (REQ-7).
        """
        event = self._commit(
            kind, data, surface_op=surface_op, source_event_seqs=source_event_seqs
        )
        self._notify(event)
        return event

    # ------------------------------------------------------------ appending

    def _commit(
        self,
        kind: str,
        data: JsonObject,
        *,
        surface_op: Any = None,
        source_event_seqs: list[int] | None = None,
    ) -> FrozenObject:
        """Validate, persist, then log one event; return a frozen copy of it.

        Everything that can refuse the event runs before the sink sees it:
        the JSON check (JSON-1), then `SessionLog.check_append`: the
        envelope (LOG-1 .. LOG-5) and a replace's range (SURF-2).
        """
        seq = len(self.session)
        check_json_value(data, what="the data", seq=seq)
        event = make_event(
            kind,
            seq,
            self._clock(),
            copy_json(data),
            surface_op=surface_op,
            source_event_seqs=source_event_seqs,
        )
        self.session.check_append(event)
        frozen: FrozenObject = deep_freeze(event)
        if self._sink is not None:
            try:
                self._sink.append([copy_json(event)])
            except Exception as error:
                detail = _loggable(f"{type(error).__name__}: {error}")
                raise PersistenceFailed(
                    f"could not persist seq {seq} ({kind}) to the session file,"
                    f" so it was not logged: {detail}"
                ) from error
        self.session.append_event(event)
        self._track(event)
        return frozen

    def _notify(self, event: FrozenObject) -> None:
        """Call the session-event listeners in order; the first failure propagates.

        A listener is synchronous, so a CancelledError it raises is its own
        doing, never the cancellation of the running task: it becomes
        `ListenerCancelled`, an ordinary listener error.
        """
        for listener in list(self.hooks.session_event):
            try:
                listener(event)
            except asyncio.CancelledError as error:
                raise ListenerCancelled(
                    f"a session-event listener raised CancelledError on"
                    f" {event['type']} (seq {event['seq']})"
                ) from error

    def _notify_quietly(self, event: FrozenObject) -> Exception | None:
        """`_notify`, returning the failure instead of raising it."""
        try:
            self._notify(event)
        except Exception as error:
            return error
        return None

    # ------------------------------------------------------------ one step

    async def _step(self, turn: int, step: int) -> JsonObject | None:
        """Run one step; return the turn's end reason, or None to step again.

        The order of operations, top to bottom, is the contract.
        """
        signal = self._signal = AbortSignal()

        # 1. Assemble the system prompt and the tool list (system-prompt
        #    waterfall). Still inside the turn, outside any step.
        system, tools = await self._assemble(turn, step)

        # 2. Checkpoint: a cancel or dispose so far ends the turn; no step
        #    is opened and no header event is written.
        self._checkpoint()

        # 3. Session prefix (session-prefix revision): composed at most once
        #    per instance, lazily, before the instance's first pre-step
        #    (PREFIX-1). A composing listener's own appends land before the
        #    boundary and join this request (PREFIX-4). An interrupted
        #    composition is discarded before it can be cached (PREFIX-5),
        #    including one that raises because it honoured the signal: after
        #    a cancel or dispose the turn ends aborted/disposed, not error.
        if self.revision is Revision.SESSION_PREFIX and self._prefix is None:
            composed = await self._compose_prefix(turn, signal)
            self._checkpoint()
            self._prefix = deep_freeze(composed)

        # 4. pre-step (serial; compaction lives here). Appends made here land
        #    before the boundary and join this request (REQ-1).
        prefix = self._prefix or ()
        await self.hooks.pre_step.dispatch(
            PreStepContext(
                loop=self,
                turn=turn,
                step=step,
                system=system,
                session_prefix=prefix,
                signal=signal,
            )
        )
        self._checkpoint()

        # 5. THE BOUNDARY (REQ-1): derive the history, then append step/start
        #    as the very next operation, with nothing in between that can
        #    yield. Whatever is appended from here on joins the NEXT request.
        derived, boundary = self._cross_boundary(turn, step)

        # 6. Checkpoint: a synchronous step/start listener may have
        #    cancelled; the step is closed, no header event is written.
        self._checkpoint()

        # 7. Request config (request waterfall) over a frozen seed: the
        #    instance's configured config on its first request, the folded
        #    header's config afterwards. A model is required (CONFIG-1).
        config = await self._request_config(turn, step, signal)

        # 8. Framing messages (request-messages revision), every step, after
        #    the boundary: a listener's appends join the NEXT request (RMSG-1).
        framing = await self._framing(turn, step, system, derived, signal)
        self._checkpoint()

        # 9. The header this step assembled, canonical (HDR-4), and the header
        #    event the writer owes the log (WRITER-1 .. WRITER-5; PREFIX-2:
        #    the cached prefix never changes within the instance). Decided
        #    here, appended in 12.
        assembled = self._header(config, system, tools, prefix, framing)
        baseline = self.session.request_header()
        owed = record_header(baseline, self._logged_header, assembled, self.revision)

        # 10. The request, from the log alone (REQ-2 .. REQ-5), frozen (REQ-7).
        #     Its header is the one in force once the owed event is logged:
        #     the fold of that event over the baseline, as the log will fold
        #     it. Not the assembled header: one equal to the baseline by value
        #     but spelled differently (0 and 0.0, JSON-2) owes no event, and
        #     the request must carry the log's spelling (CACHE-1). The dev
        #     invariant rebuilds the request from a fresh log holding the
        #     pending header event, before anything is logged for it.
        pending = None
        if owed is not None:
            pending = make_event(owed["type"], len(self.session), 0, owed["data"])
        header = fold_step(baseline, pending, self.revision) if pending else baseline
        if header is None:  # record_header owes a snapshot while there is none
            raise AgentError("no header is in force for the request", code="NO_HEADER")
        request = FrozenRequest.build(
            turn=turn,
            step=step,
            boundary=boundary,
            header=header,
            messages=request_messages(header, derived, self.revision),
        )
        if self.check_requests:
            events = self.session.events
            if pending is not None:
                events.append(pending)
            check_request(events, request, self.revision)

        # 11. Dispatch observers see the frozen request before its header
        #     event is logged: one that raises, cancels or disposes ends the
        #     step with no header event and nothing sent. The writer's
        #     decision must still stand: no header event was logged meanwhile.
        await self.hooks.dispatch.dispatch(
            DispatchContext(loop=self, request=request, signal=signal)
        )
        self._checkpoint()
        if not json_equal(self.session.request_header(), baseline):
            raise RequestDiverges(
                "a header event was logged while the dispatch observers ran; the"
                " request no longer carries the header in force",
                rule="REQ-2",
            )

        # 12. The writer appends the header event (TURN-3); the instance has
        #     now logged a header, whatever its listeners do (WRITER-1). From
        #     here on the request is always sent: the provider call starts
        #     even when a listener of the header event raised, cancelled or
        #     disposed; that aborts it in flight, as an abort races a fetch.
        failure: Exception | None = None
        if owed is not None:
            event = self._commit(owed["type"], owed["data"])
            self._logged_header = True
            failure = self._notify_quietly(event)
        reply = await self._dispatch(request, signal, failure)
        self.replies.append(reply)

        # 13. The answer joins the log, with its usage (incl. cache reads).
        content = reply.content
        if reply.finish == "max-tokens":
            content = [b for b in content if b.get("type") != "tool-call"]
        message: JsonObject = {"turn": turn, "step": step, "content": content}
        if reply.usage is not None:
            message["usage"] = reply.usage
        calls = [b for b in content if b.get("type") == "tool-call"]
        if content or reply.usage is not None:
            self.append("assistant/message", message, surface_op="append")

        # 14. Tool calls, one after another: tool/call, execute, tool/result.
        #     Once the turn is cancelled or disposed no further call starts;
        #     each call left gets an error tool/result ("not run: ...") whose
        #     source is the assistant message, so every call in the log is
        #     answered and the next request is well-formed (WIRE-2). Then the
        #     post-execute contexts, after ALL results of the step, so
        #     call/result adjacency on the surface is never broken.
        extra: list[Content] = []
        for call in calls:
            if self._interruption() is not None:
                break
            extra.extend(await self._run_tool(turn, step, call, signal))
        stopped = self._interruption()
        if stopped is not None:
            late = self._answer_unanswered(stopped)
            if late is not None:
                raise late
        for context in extra:
            self.append(
                "context/message",
                {"content": content_blocks(context), "source": POST_EXECUTE_SOURCE},
                surface_op="append",
            )

        # 15. Close the step; continue while the model calls tools.
        self._close_step()
        self._checkpoint()
        if reply.finish == "max-tokens":
            return {"kind": "max-tokens"}
        return None if calls else {"kind": "completed"}

    # ------------------------------------------------------------ step parts

    def _cross_boundary(self, turn: int, step: int) -> tuple[list[JsonObject], int]:
        """Derive the history, then append ``step/start``, nothing between (REQ-1)."""
        derived = self.session.derive_messages()
        boundary: int = self.append("step/start", {"turn": turn, "step": step})["seq"]
        return derived, boundary

    def _checkpoint(self) -> None:
        """Raise `_TurnEnd` when the turn was disposed or cancelled (PREFIX-5)."""
        reason = self._interruption()
        if reason is not None:
            raise _TurnEnd(reason)

    def _interruption(self) -> JsonObject | None:
        """The end reason of a disposed or cancelled turn, or None."""
        if self._disposed:
            return {"kind": "disposed"}
        if self._cancel is not None:
            reason: JsonObject = {"kind": "aborted"}
            if self._cancel[0] is not None:
                reason["reason"] = self._cancel[0]
            return reason
        return None

    def _seed_assembly(self) -> Assembly:
        names = (
            tuple(self.tool_order)
            if self.tool_order is not None
            else tuple(sorted(self.tools))
        )
        return Assembly(system=self.system, tools=names)

    async def _assemble(self, turn: int, step: int) -> tuple[str, list[JsonObject]]:
        assembly = await self.hooks.system_prompt.dispatch(
            AssembleContext(loop=self, turn=turn, step=step), self._seed_assembly()
        )
        unknown = [name for name in assembly.tools if name not in self.tools]
        if unknown:
            raise AgentError(
                f"the assembly names unknown tools: {', '.join(unknown)}",
                code="UNKNOWN_TOOL",
            )
        return assembly.system, [self.tools[name].schema() for name in assembly.tools]

    async def _compose_prefix(self, turn: int, signal: AbortSignal) -> list[JsonObject]:
        self.compositions += 1
        composed = await self.hooks.session_prefix.dispatch(
            PrefixContext(loop=self, turn=turn, signal=signal), ()
        )
        messages: list[JsonObject] = thaw(composed)
        check_header({"config": {"model": "-"}, "messagePrefix": messages})
        return messages

    async def _request_config(
        self, turn: int, step: int, signal: AbortSignal
    ) -> JsonObject:
        baseline = self.session.request_header()
        source = baseline["config"] if self._logged_header and baseline else self.config
        config = await self.hooks.request.dispatch(
            RequestContext(loop=self, turn=turn, step=step, signal=signal),
            deep_freeze(source),
        )
        plain: JsonObject = thaw(config)
        if not isinstance(plain.get("model"), str) or not plain["model"]:
            raise NoModel(
                "the request has no model: give the loop a model or config, or"
                " supply one from a request listener"
            )
        return plain

    async def _framing(
        self,
        turn: int,
        step: int,
        system: str,
        derived: list[JsonObject],
        signal: AbortSignal,
    ) -> Framing:
        if self.revision is not Revision.REQUEST_MESSAGES:
            return Framing()
        framing = await self.hooks.request_messages.dispatch(
            RequestMessagesContext(
                loop=self,
                turn=turn,
                step=step,
                system=system,
                boundary_messages=deep_freeze(derived),
                signal=signal,
            ),
            Framing(),
        )
        return Framing(before=thaw(framing.before), after=thaw(framing.after))

    def _header(
        self,
        config: JsonObject,
        system: str,
        tools: list[JsonObject],
        prefix: tuple[FrozenObject, ...],
        framing: Framing,
    ) -> Header:
        header: Header = {"config": config, "system": system, "tools": tools}
        if self.revision is Revision.SESSION_PREFIX:
            header["messagePrefix"] = thaw(prefix)
        elif self.revision is Revision.REQUEST_MESSAGES:
            header["messagePrefix"] = list(framing.before)
            header["messageSuffix"] = list(framing.after)
        return canonical_header(header, self.revision)

    async def _dispatch(
        self, request: FrozenRequest, signal: AbortSignal, failure: Exception | None
    ) -> ProviderReply:
        """Send `request`: start the provider call, then race it against `signal`.

        Runs once the step's header event (if it owed one) is logged, and
        always starts the call: its coroutine runs up to its first wait
        before anything may abort it. A cancel or dispose, even one made by
        a listener of the header event, then aborts it in flight, as an
        abort races a fetch; so does `failure` (a header-event listener's
        error), which is raised once the call is aborted. Whether the bytes
        reached the provider first is the race's outcome: either way the log
        shows the header event and no response (`reference.reconstruct`).
        """
        self.requests.append(request)
        call = asyncio.ensure_future(self.provider.complete(request, signal))
        aborted = asyncio.ensure_future(signal.wait())
        try:
            await asyncio.sleep(0)  # the call takes its first step: it is under way
            if failure is None and not signal.aborted:
                await asyncio.wait({call, aborted}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            aborted.cancel()
            if not call.done():
                call.cancel()
                await asyncio.wait({call})
        if failure is not None or signal.aborted:
            if not call.cancelled():
                call.exception()  # the interruption wins over the call's outcome
            if failure is not None:
                raise failure
            self._checkpoint()
        return call.result()

    async def _run_tool(
        self, turn: int, step: int, call: JsonObject, signal: AbortSignal
    ) -> list[Content]:
        call_id, name, arguments = call["id"], call["name"], call["arguments"]
        logged = self.append(
            "tool/call",
            {
                "turn": turn,
                "step": step,
                "callId": call_id,
                "name": name,
                "arguments": arguments,
            },
        )
        context = ToolContext(
            loop=self,
            turn=turn,
            step=step,
            call_id=call_id,
            name=name,
            arguments=arguments,
            signal=signal,
        )
        result, blocks = await self._execute(context)
        self.append(
            "tool/result",
            {
                "turn": turn,
                "step": step,
                "callId": call_id,
                "content": blocks,
                "isError": result.is_error,
            },
            surface_op="append",
            source_event_seqs=[logged["seq"]],
        )
        outcomes = await self.hooks.post_execute.dispatch(
            PostExecuteContext(call=context, result=result)
        )
        return [outcome for outcome in outcomes if outcome]

    async def _execute(
        self, context: ToolContext
    ) -> tuple[ToolResult, list[JsonObject]]:
        """Run a tool; return its result and the content blocks to log.

        Never fails the turn: an unknown tool, an exception, a CancelledError
        the tool raised itself, or returned content that cannot be logged
        (not content blocks, or not JSON-1: a lone surrogate...) becomes an
        error result. Only the cancellation of the task running the turn
        propagates.
        """
        name = _loggable(context.name)
        tool = self.tools.get(context.name)
        if tool is None:
            failed = ToolResult(content=f"unknown tool {name!r}", is_error=True)
            return failed, content_blocks(failed.content)
        try:
            arguments = json.loads(context.arguments) if context.arguments else {}
            output = await tool.execute(arguments, context)
        except asyncio.CancelledError:
            if _task_cancelled():
                raise
            failed = ToolResult(content=f"{name} was cancelled", is_error=True)
        except Exception as error:
            failed = ToolResult(
                content=_loggable(f"{name} failed: {error}"), is_error=True
            )
        else:
            result = (
                output if isinstance(output, ToolResult) else ToolResult(content=output)
            )
            try:
                return result, content_blocks(result.content)
            except (TypeError, NotJsonValue) as error:
                failed = ToolResult(
                    content=f"{name} returned content that cannot be logged: {error}",
                    is_error=True,
                )
        return failed, content_blocks(failed.content)

    def _answer_unanswered(self, reason: JsonObject) -> Exception | None:
        """Log an error result for each tool call of the step still unanswered.

        A call that never started is answered ``not run``, with the
        assistant message as its source; one the turn's end interrupted
        (its ``tool/call`` logged), ``interrupted``, with the ``tool/call``
        as its source. Returns the first listener failure, if any.
        """
        ended = ENDED.get(reason["kind"], "ended by an error")
        first: Exception | None = None
        for entry in list(self._unanswered):
            text = (
                f"interrupted: the turn was {ended} while the tool ran"
                if entry.started
                else f"not run: the turn was {ended} before this call started"
            )
            event = self._commit(
                "tool/result",
                {
                    "turn": entry.turn,
                    "step": entry.step,
                    "callId": entry.call_id,
                    "content": [{"type": "text", "text": text}],
                    "isError": True,
                },
                surface_op="append",
                source_event_seqs=[entry.source],
            )
            error = self._notify_quietly(event)
            first = first or error
        return first

    # ------------------------------------------------------------ turns

    async def _run_turn(
        self, content: list[JsonObject], source: JsonObject
    ) -> TurnResult:
        self._repair_open_turn()
        turn = self._last_turn + 1
        self._cancel = None
        self._running = True
        trigger = {"kind": "message", "source": source}
        step = 0
        error: BaseException | None = None
        cancelled: asyncio.CancelledError | None = None
        try:
            self.append("turn/start", {"turn": turn, "trigger": trigger})
            self.append(
                "user/message",
                {"content": content, "source": source},
                surface_op="append",
            )
            while True:
                step += 1
                if step > self.max_steps:
                    raise AgentError(
                        f"the turn took more than {self.max_steps} steps",
                        code="STEP_LIMIT",
                    )
                end = await self._step(turn, step)
                if end is not None:
                    reason = end
                    break
        except _TurnEnd as interrupted:
            reason = interrupted.reason
        except asyncio.CancelledError as stop:
            if _task_cancelled():
                cancelled = stop
                reason = {"kind": "aborted", "reason": "task cancelled"}
            else:  # raised by a listener or the provider: an ordinary failure
                error = stop
                reason = self._failure_reason(stop, step)
        except Exception as failure:
            error = failure
            reason = self._failure_reason(failure, step)
        finally:
            self._running = False
            self._signal = None
            self._cancel = None
        if self._open_turn != turn:  # turn/start itself was not logged
            raise cancelled or error or AgentError("the turn did not start")
        try:
            late = self._finish_turn(turn, reason)
        except PersistenceFailed:
            if cancelled is not None:
                raise cancelled from None
            raise
        if cancelled is not None:
            raise cancelled
        if isinstance(error, RequestDiverges):
            raise error
        if late is not None:
            raise late
        return TurnResult(turn=turn, reason=reason, steps=step, error=error)

    def _failure_reason(self, failure: BaseException, step: int) -> JsonObject:
        """The end reason of a turn that `failure` stopped.

        After a cancel or dispose it is ``aborted`` / ``disposed``: a
        listener honouring the signal raises (PREFIX-5). A broken contract
        (`RequestDiverges`) or a failed persist is an ``error`` regardless.
        """
        if not isinstance(failure, RequestDiverges | PersistenceFailed):
            interrupted = self._interruption()
            if interrupted is not None:
                return interrupted
        message = str(failure) or type(failure).__name__
        reason: JsonObject = {
            "kind": "error",
            "step": step,
            "message": _loggable(message),
        }
        code = getattr(failure, "code", None)
        if isinstance(code, str):
            reason["code"] = code
        return reason

    def _finish_turn(self, turn: int, reason: JsonObject) -> Exception | None:
        """Answer the step's unanswered tool calls, close the step, end the turn.

        Each closing event is persisted and logged before its listeners run,
        and a listener's failure does not stop the closing: the first one is
        returned. When the sink refuses a closing event, `PersistenceFailed`
        propagates and the turn stays open, in the file as in memory; the
        instance's next turn (or idle inject) closes it first, with `reason`.
        """
        try:
            failures = [self._answer_unanswered(reason)]
            if self._open_step is not None:
                open_turn, open_step = self._open_step
                event = self._commit("step/end", {"turn": open_turn, "step": open_step})
                failures.append(self._notify_quietly(event))
            event = self._commit("turn/end", {"turn": turn, "reason": reason})
            failures.append(self._notify_quietly(event))
        except PersistenceFailed:
            self._stranded = reason
            raise
        self._stranded = None
        return next((failure for failure in failures if failure is not None), None)

    def _close_step(self) -> None:
        if self._open_step is not None:
            turn, step = self._open_step
            self.append("step/end", {"turn": turn, "step": step})

    def _track(self, event: JsonObject) -> None:
        """Follow what the log holds: the open turn and step, unanswered calls."""
        kind, data = event["type"], event["data"]
        if kind == "turn/start":
            number = data.get("turn")
            self._open_turn = _as_int(number)
            if is_integer(number):  # JSON-5: 1.0 is turn 1; a boolean is no number
                self._last_turn = max(self._last_turn, int(number))
        elif kind == "turn/end":
            self._open_turn = None
            self._open_step = None
            self._unanswered = []
        elif kind == "step/start":
            self._open_step = (_as_int(data.get("turn")), _as_int(data.get("step")))
        elif kind == "step/end":
            self._open_step = None
            self._unanswered = []
        elif kind == "assistant/message" and isinstance(data.get("content"), list):
            self._unanswered.extend(
                _Unanswered(
                    turn=_as_int(data.get("turn")),
                    step=_as_int(data.get("step")),
                    call_id=block.get("id"),
                    source=event["seq"],
                )
                for block in data["content"]
                if isinstance(block, dict) and block.get("type") == "tool-call"
            )
        elif kind == "tool/call":
            entry = self._find_unanswered(data.get("callId"), started=False)
            if entry is not None:
                entry.started, entry.source = True, event["seq"]
        elif kind == "tool/result":
            entry = self._find_unanswered(data.get("callId"), started=True)
            entry = entry or self._find_unanswered(data.get("callId"), started=False)
            if entry is not None:
                self._unanswered.remove(entry)

    def _find_unanswered(self, call_id: Any, *, started: bool) -> _Unanswered | None:
        for entry in self._unanswered:
            if entry.call_id == call_id and entry.started is started:
                return entry
        return None

    def _repair_open_turn(self) -> None:
        """Close a turn left open before this instance's next turn.

        Left open by a crashed instance (it ends ``interrupted``), or by this
        one when the sink refused its closing events (it ends with the
        reason it had).
        """
        if self._open_turn is None:
            return
        late = self._finish_turn(
            self._open_turn, self._stranded or {"kind": "interrupted"}
        )
        if late is not None:
            raise late

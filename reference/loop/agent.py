"""The agent loop: turns and steps over one session log, one instance at a time.

Implements docs/spec.md sections 8 to 11 (TURN-*, REQ-*, RMSG-*, PREFIX-*)
on top of the pure codec (`reference.header`, `reference.writer`) and the
session log (`reqfold.reference.session_log`). docs/reference-harness.md walks
through it with the demo's log.

Theory of operation. An `AgentLoop` is one *instance* over a session: it
owns the writer's per-instance state (has it logged a header yet?) and, in
the ``session-prefix`` revision, the cached session prefix. A process
restart, a resume or a fork is a new `AgentLoop` over the same log. The
loop runs exactly one revision, chosen when it is built.

`AgentLoop.send` runs one turn: ``turn/start``, ``user/message``, then
steps until the model stops calling tools, then ``turn/end`` with its
reason. `AgentLoop.run_step` is the whole order of operations of one step, top
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

Around it: the seams and the contexts their listeners see live in
`reference.loop.contexts`; running a tool call in `reference.loop.tool_calls`;
appending (validate, persist, log, notify) in `reqfold.reference.loop.appending`;
what interrupted a turn (a cancel or a dispose, the step's signal) is one
frozen `reqfold.reference.loop.abort.RunState`; where the log stands in its turns
and steps (the open step, its unanswered calls) is the pure fold of
`reqfold.reference.turns`, which `reqfold.reference.reconstruct` shares.

`run_step` and `run_turn` are the contract's order of operations and read
top to bottom. Each step part they call is a public method with a stable
contract, a *seam for known-bad variants*: a subclass overrides one (and
calls ``super()``) to show one bug, as the bad-harness gallery
(tests/conformance/bad_harnesses/) does. Overridable methods rather than a
separate seams object, because every defect is a variation of one step
part in place, with the loop's own state around it; the list, each with
what it must do, is in docs/reference-harness.md ("Seams for known-bad
variants"). The loop's private state stays private: the few state changes
a variant needs are methods too (`forget_prefix`, `adopt_prefix`,
`forget_interruption`).

Listener seams (`Hooks`), dispatched as `reqfold.reference.loop.waterfall` says:

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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from reqfold.reference.header import Header, canonical_header, check_header, fold_step
from reqfold.reference.json_values import (
    JsonObject,
    escape_lone_surrogates,
    json_equal,
)
from reqfold.reference.loop.abort import (
    DISPOSED,
    AbortSignal,
    Interruption,
    RunState,
    task_cancelled,
)
from reqfold.reference.loop.appending import SessionAppender
from reqfold.reference.loop.client import Provider, ProviderReply
from reqfold.reference.loop.clock import Clock, wall_clock
from reqfold.reference.loop.contexts import (
    AssembleContext,
    Assembly,
    DispatchContext,
    EventListener,
    Framing,
    Hooks,
    PrefixContext,
    PreStepContext,
    RequestContext,
    RequestMessagesContext,
)
from reqfold.reference.loop.errors import (
    AgentError,
    LoopDisposed,
    NoModel,
    PersistenceFailed,
    RequestDiverges,
)
from reqfold.reference.loop.freeze import FrozenObject, deep_freeze, thaw
from reqfold.reference.loop.frozen_request import FrozenRequest
from reqfold.reference.loop.invariant import check_request
from reqfold.reference.loop.persistence import EventSink
from reqfold.reference.loop.tool_calls import run_tool
from reqfold.reference.loop.tools import Content, Tool, content_blocks
from reqfold.reference.request import request_messages
from reqfold.reference.revisions import LATEST, Revision
from reqfold.reference.session_log import SessionLog, make_event
from reqfold.reference.turns import as_int, unanswered_result
from reqfold.reference.writer import record_header

USER_SOURCE: JsonObject = {"kind": "user"}
POST_EXECUTE_SOURCE: JsonObject = {"kind": "plugin", "plugin": "post-execute"}


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


class TurnInterrupted(Exception):
    """A checkpoint found the turn interrupted: `run_turn` ends it with `reason`."""

    def __init__(self, reason: JsonObject) -> None:
        super().__init__(reason["kind"])
        self.reason = reason


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
        sink: EventSink | None = None,
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
        self._log = SessionAppender(self.session, sink, clock, self.hooks.session_event)
        """Validates, persists, logs and notifies (`reference.loop.appending`)."""
        self.logged_header = False
        """The writer's per-instance state: has this instance logged a header?"""
        self._prefix: tuple[FrozenObject, ...] | None = None
        self._lock = asyncio.Lock()
        self._state = RunState()
        """Whether a turn runs, what interrupted it (`reqfold.reference.loop.abort`)."""
        self._repair_open_turn()

    # ------------------------------------------------------------ public API

    @property
    def session_prefix(self) -> tuple[FrozenObject, ...] | None:
        """The cached, frozen session prefix, or None before composition."""
        return self._prefix

    @property
    def disposed(self) -> bool:
        """Whether `dispose` has been called."""
        return self._state.disposed

    @property
    def running(self) -> bool:
        """Whether a turn is running."""
        return self._state.running

    @property
    def sink(self) -> EventSink | None:
        """Where appended events are persisted, if anywhere."""
        return self._log.sink

    @property
    def last_turn(self) -> int:
        """The number of the last turn started in the log (0 when none)."""
        return self._log.turns.last_turn

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
            if self._state.disposed:
                raise LoopDisposed("the loop instance was disposed")
            return await self.run_turn(blocks, origin)

    def cancel(self, reason: str | None = None) -> None:
        """Abort the running turn (no effect while idle); it ends ``aborted``."""
        state = self._state
        if not state.running:
            return
        if state.interruption is None:
            self._state = replace(state, interruption=Interruption("aborted", reason))
        if state.signal is not None:
            state.signal.abort(reason)

    def dispose(self) -> None:
        """End this instance: a running turn ends ``disposed``; no more turns."""
        self._state = replace(self._state, interruption=DISPOSED)
        if self._state.signal is not None:
            self._state.signal.abort("disposed")

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
        if self._state.disposed:
            raise LoopDisposed("the loop instance was disposed")
        blocks = content_blocks(content)
        origin = dict(source) if source is not None else dict(USER_SOURCE)
        data = {"content": blocks, "source": origin}
        if self._log.turns.open_turn is not None and self._state.stranded is None:
            return self.append("context/message", data, surface_op="append")
        self._repair_open_turn()
        turn = self._log.turns.last_turn + 1
        trigger = {"kind": "injection", "source": origin}
        start = self._log.commit("turn/start", {"turn": turn, "trigger": trigger})
        failure = self._log.notify_quietly(start)
        event: FrozenObject | None = None
        if failure is None:
            try:
                event = self.append("context/message", data, surface_op="append")
            except Exception as error:
                failure = error
        reason: JsonObject = {"kind": "completed"}
        if failure is not None:
            reason = self.failure_reason(failure, 0)
        late = self.finish_turn(turn, reason)
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
        See `reqfold.reference.loop.appending`.
        """
        return self._log.append(
            kind, data, surface_op=surface_op, source_event_seqs=source_event_seqs
        )

    # ------------------------------------------------------------ one step

    async def run_step(self, turn: int, step: int) -> JsonObject | None:
        """Run one step; return the turn's end reason, or None to step again.

        The order of operations, top to bottom, is the contract.
        """
        signal = AbortSignal()
        self._state = replace(self._state, signal=signal)

        # 1. Assemble the system prompt and the tool list (system-prompt
        #    waterfall). Still inside the turn, outside any step.
        system, tools = await self.assemble(turn, step)

        # 2. Checkpoint: a cancel or dispose so far ends the turn; no step
        #    is opened and no header event is written.
        self.checkpoint()

        # 3. Session prefix (session-prefix revision): composed at most once
        #    per instance, lazily, before the instance's first pre-step
        #    (PREFIX-1). A composing listener's own appends land before the
        #    boundary and join this request (PREFIX-4). An interrupted
        #    composition is discarded before it can be cached (PREFIX-5),
        #    including one that raises because it honoured the signal: after
        #    a cancel or dispose the turn ends aborted/disposed, not error.
        if self.revision is Revision.SESSION_PREFIX and self._prefix is None:
            composed = await self.compose_prefix(turn, signal)
            self.checkpoint()
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
        self.checkpoint()

        # 5. THE BOUNDARY (REQ-1): derive the history, then append step/start
        #    as the very next operation, with nothing in between that can
        #    yield. Whatever is appended from here on joins the NEXT request.
        derived, boundary = self.cross_boundary(turn, step)

        # 6. Checkpoint: a synchronous step/start listener may have
        #    cancelled; the step is closed, no header event is written.
        self.checkpoint()

        # 7. Request config (request waterfall) over a frozen seed: the
        #    instance's configured config on its first request, the folded
        #    header's config afterwards. A model is required (CONFIG-1).
        config = await self.request_config(turn, step, signal)

        # 8. Framing messages (request-messages revision), every step, after
        #    the boundary: a listener's appends join the NEXT request (RMSG-1).
        framing = await self.frame_messages(turn, step, system, derived, signal)
        self.checkpoint()

        # 9. The header this step assembled, canonical (HDR-4), and the header
        #    event the writer owes the log (WRITER-1 .. WRITER-5; PREFIX-2:
        #    the cached prefix never changes within the instance). Decided
        #    here, appended in 12.
        assembled = self.build_header(config, system, tools, prefix, framing)
        baseline = self.session.request_header()
        owed = self.owed_header_event(baseline, assembled)

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
        self.checkpoint()
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
            event = self._log.commit(owed["type"], owed["data"])
            self.logged_header = True
            failure = self._log.notify_quietly(event)
        reply = await self.dispatch_request(request, signal, failure)
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
            if self.interruption() is not None:
                break
            extra.extend(
                await run_tool(
                    self,
                    self.hooks,
                    self.tools,
                    turn=turn,
                    step=step,
                    call=call,
                    signal=signal,
                )
            )
        stopped = self.interruption()
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
        self.close_step()
        self.checkpoint()
        if reply.finish == "max-tokens":
            return {"kind": "max-tokens"}
        return None if calls else {"kind": "completed"}

    # ------------------------------------------------------------ step parts
    #
    # The seams for known-bad variants (docs/reference-harness.md): each
    # public method below is one step part with a stable contract; a subclass
    # overrides one, calling super(), to show one bug.

    def owed_header_event(
        self, baseline: Header | None, assembled: Header
    ) -> JsonObject | None:
        """The header event the writer owes the log before this step's request
        (`reference.writer.record_header` with this instance's writer state),
        or None (WRITER-1 .. WRITER-6)."""
        return record_header(baseline, self.logged_header, assembled, self.revision)

    def ends_open_step(self, reason: JsonObject) -> bool:
        """Whether ending a turn with `reason` answers the step's unanswered
        calls and closes a step left open: always (TURN-2)."""
        return True

    def forget_prefix(self) -> None:
        """Drop the cached session prefix: the next step composes it again."""
        self._prefix = None

    def adopt_prefix(self, messages: Sequence[Any]) -> None:
        """Cache `messages` as the session prefix, as a finished composition does."""
        self._prefix = deep_freeze(list(messages))

    def forget_interruption(self) -> None:
        """Forget a cancel or dispose of the running turn (its signal stays aborted)."""
        self._state = replace(self._state, interruption=None)

    def cross_boundary(self, turn: int, step: int) -> tuple[list[JsonObject], int]:
        """Derive the history, then append ``step/start``, nothing between (REQ-1)."""
        derived = self.session.derive_messages()
        boundary: int = self.append("step/start", {"turn": turn, "step": step})["seq"]
        return derived, boundary

    def checkpoint(self) -> None:
        """Raise `TurnInterrupted` if the turn was cancelled or disposed (PREFIX-5)."""
        reason = self.interruption()
        if reason is not None:
            raise TurnInterrupted(reason)

    def interruption(self) -> JsonObject | None:
        """The end reason of a disposed or cancelled turn, or None."""
        interruption = self._state.interruption
        return interruption.end_reason() if interruption is not None else None

    def _seed_assembly(self) -> Assembly:
        names = (
            tuple(self.tool_order)
            if self.tool_order is not None
            else tuple(sorted(self.tools))
        )
        return Assembly(system=self.system, tools=names)

    async def assemble(self, turn: int, step: int) -> tuple[str, list[JsonObject]]:
        """The step's system prompt and tool schemas (system-prompt waterfall)."""
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

    async def compose_prefix(self, turn: int, signal: AbortSignal) -> list[JsonObject]:
        """Run the session-prefix waterfall once; `run_step` caches the result
        only after its checkpoint (PREFIX-1, PREFIX-5)."""
        self.compositions += 1
        composed = await self.hooks.session_prefix.dispatch(
            PrefixContext(loop=self, turn=turn, signal=signal), ()
        )
        messages: list[JsonObject] = thaw(composed)
        check_header({"config": {"model": "-"}, "messagePrefix": messages})
        return messages

    async def request_config(
        self, turn: int, step: int, signal: AbortSignal
    ) -> JsonObject:
        """The step's request config (request waterfall) over the configured
        config on the instance's first request, the folded one afterwards."""
        baseline = self.session.request_header()
        source = baseline["config"] if self.logged_header and baseline else self.config
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

    async def frame_messages(
        self,
        turn: int,
        step: int,
        system: str,
        derived: list[JsonObject],
        signal: AbortSignal,
    ) -> Framing:
        """The step's framing messages (request-messages revision only)."""
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

    def build_header(
        self,
        config: JsonObject,
        system: str,
        tools: list[JsonObject],
        prefix: tuple[FrozenObject, ...],
        framing: Framing,
    ) -> Header:
        """The canonical header this step assembled (HDR-4)."""
        header: Header = {"config": config, "system": system, "tools": tools}
        if self.revision is Revision.SESSION_PREFIX:
            header["messagePrefix"] = thaw(prefix)
        elif self.revision is Revision.REQUEST_MESSAGES:
            header["messagePrefix"] = list(framing.before)
            header["messageSuffix"] = list(framing.after)
        return canonical_header(header, self.revision)

    async def dispatch_request(
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
        shows the header event and no response (`reqfold.reference.reconstruct`).
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
            self.checkpoint()
        return call.result()

    def _answer_unanswered(self, reason: JsonObject) -> Exception | None:
        """Log an error result for each tool call of the step still unanswered.

        A call that never started is answered ``not run``, with the
        assistant message as its source; one the turn's end interrupted
        (its ``tool/call`` logged), ``interrupted``, with the ``tool/call``
        as its source. Returns the first listener failure, if any.
        """
        first: Exception | None = None
        for call in self._log.turns.unanswered:
            event = self._log.commit(
                "tool/result",
                unanswered_result(call, reason),
                surface_op="append",
                source_event_seqs=[call.source],
            )
            error = self._log.notify_quietly(event)
            first = first or error
        return first

    # ------------------------------------------------------------ turns

    async def run_turn(
        self, content: list[JsonObject], source: JsonObject
    ) -> TurnResult:
        """Run one turn (`send` holds the lock): ``turn/start``, the user's
        message, steps until one ends the turn, then `finish_turn`."""
        self._repair_open_turn()
        turn = self._log.turns.last_turn + 1
        self._state = replace(self._state, running=True)
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
                end = await self.run_step(turn, step)
                if end is not None:
                    reason = end
                    break
        except TurnInterrupted as interrupted:
            reason = interrupted.reason
        except asyncio.CancelledError as stop:
            if task_cancelled():
                cancelled = stop
                reason = {"kind": "aborted", "reason": "task cancelled"}
            else:  # raised by a listener or the provider: an ordinary failure
                error = stop
                reason = self.failure_reason(stop, step)
        except Exception as failure:
            error = failure
            reason = self.failure_reason(failure, step)
        finally:
            # a cancel ends with its turn; a dispose outlives it
            kept = DISPOSED if self._state.disposed else None
            self._state = replace(
                self._state, running=False, signal=None, interruption=kept
            )
        if self._log.turns.open_turn != turn:  # turn/start itself was not logged
            raise cancelled or error or AgentError("the turn did not start")
        try:
            late = self.finish_turn(turn, reason)
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

    def failure_reason(self, failure: BaseException, step: int) -> JsonObject:
        """The end reason of a turn that `failure` stopped.

        After a cancel or dispose it is ``aborted`` / ``disposed``: a
        listener honouring the signal raises (PREFIX-5). A broken contract
        (`RequestDiverges`) or a failed persist is an ``error`` regardless.
        """
        if not isinstance(failure, RequestDiverges | PersistenceFailed):
            interrupted = self.interruption()
            if interrupted is not None:
                return interrupted
        message = str(failure) or type(failure).__name__
        reason: JsonObject = {
            "kind": "error",
            "step": step,
            "message": escape_lone_surrogates(message),
        }
        code = getattr(failure, "code", None)
        if isinstance(code, str):
            reason["code"] = code
        return reason

    def finish_turn(self, turn: int, reason: JsonObject) -> Exception | None:
        """Answer the step's unanswered tool calls, close the step, end the turn.

        Each closing event is persisted and logged before its listeners run,
        and a listener's failure does not stop the closing: the first one is
        returned. When the sink refuses a closing event, `PersistenceFailed`
        propagates and the turn stays open, in the file as in memory; the
        instance's next turn (or idle inject) closes it first, with `reason`.
        """
        try:
            left_open = self._log.turns.open_step is not None
            closing = not left_open or self.ends_open_step(reason)
            failures = [self._answer_unanswered(reason)] if closing else []
            if left_open and closing:
                event = self._log.commit("step/end", self._step_end())
                failures.append(self._log.notify_quietly(event))
            event = self._log.commit("turn/end", {"turn": turn, "reason": reason})
            failures.append(self._log.notify_quietly(event))
        except PersistenceFailed:
            self._state = replace(self._state, stranded=reason)
            raise
        self._state = replace(self._state, stranded=None)
        return next((failure for failure in failures if failure is not None), None)

    def close_step(self) -> None:
        """Append ``step/end`` for the open step, if one is open."""
        if self._log.turns.open_step is not None:
            self.append("step/end", self._step_end())

    def _step_end(self) -> JsonObject:
        """The data of the open step's ``step/end`` (JSON-5: 1.0 is step 1)."""
        step = self._log.turns.open_step
        assert step is not None
        return {"turn": as_int(step.turn), "step": as_int(step.step)}

    def _repair_open_turn(self) -> None:
        """Close a turn left open before this instance's next turn.

        Left open by a crashed instance (it ends ``interrupted``), or by this
        one when the sink refused its closing events (it ends with the
        reason it had).
        """
        if self._log.turns.open_turn is None:
            return
        late = self.finish_turn(
            self._log.turns.open_turn, self._state.stranded or {"kind": "interrupted"}
        )
        if late is not None:
            raise late

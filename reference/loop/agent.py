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
events strictly before the step's ``step/start`` (REQ-1), the header is
what the writer just logged or the header in force (REQ-2), and the dev
invariant rebuilds both from a fresh log before every dispatch.

Every append goes through `AgentLoop.append`, which stamps the clock's
time, writes the event to the sink (a JSONL file) and then notifies
session-event listeners synchronously, so a listener reacting to
``step/start`` runs before the loop's next line (and its appends land after
the boundary).

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

from reference.header import SNAPSHOT, Header, canonical_header, check_header
from reference.json_values import JsonObject
from reference.loop.abort import AbortSignal
from reference.loop.clock import Clock, wall_clock
from reference.loop.errors import AgentError, LoopDisposed, NoModel, RequestDiverges
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
from reference.session_log import SessionLog
from reference.writer import record_header

USER_SOURCE: JsonObject = {"kind": "user"}
POST_EXECUTE_SOURCE: JsonObject = {"kind": "plugin", "plugin": "post-execute"}

EventListener = Callable[[JsonObject], None]


class EventSink:
    """Where logged events are persisted (a `reference.jsonl.JsonlWriter` fits)."""

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
    """What a dispatch listener sees: the frozen request about to be sent."""

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
    """How a turn ended: its number, the ``turn/end`` reason, its steps."""

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
        sink: where appended events are persisted (a `JsonlWriter`).
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
        """Call `listener(event)` synchronously after each append; returns a remover."""
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
                from its log rebuild (after the turn was closed).
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
    ) -> JsonObject:
        """Log a durable ``context/message``; returns it.

        Inside an open turn it joins the turn (and the next request built
        after it). While idle it is wrapped in a one-shot turn
        (``trigger.kind: "injection"``, ending ``completed``) that never
        calls the model (TURN-4).
        """
        blocks = content_blocks(content)
        origin = dict(source) if source is not None else dict(USER_SOURCE)
        data = {"content": blocks, "source": origin}
        if self._open_turn is not None:
            return self.append("context/message", data, surface_op="append")
        turn = self._last_turn + 1
        trigger = {"kind": "injection", "source": origin}
        self.append("turn/start", {"turn": turn, "trigger": trigger})
        event = self.append("context/message", data, surface_op="append")
        self.append("turn/end", {"turn": turn, "reason": {"kind": "completed"}})
        return event

    def append(
        self,
        kind: str,
        data: JsonObject,
        *,
        surface_op: Any = None,
        source_event_seqs: list[int] | None = None,
    ) -> JsonObject:
        """Append an event at the clock's time, persist it, notify listeners.

        The event is in the log before any listener runs, so a listener that
        raises leaves it logged.
        """
        event = self.session.append(
            kind,
            data,
            time=self._clock(),
            surface_op=surface_op,
            source_event_seqs=source_event_seqs,
        )
        if self._sink is not None:
            self._sink.append([event])
        self._track(event)
        for listener in list(self.hooks.session_event):
            listener(event)
        return event

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
        #    composition is discarded before it can be cached (PREFIX-5).
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

        # 9. The header the request carries, canonical (HDR-4), and the
        #    header event the writer owes the log (WRITER-1 .. WRITER-5;
        #    PREFIX-2: the cached prefix never changes within the instance).
        header = self._header(config, system, tools, prefix, framing)
        owed = record_header(
            self.session.request_header(), self._logged_header, header, self.revision
        )
        if owed is not None:
            self.append(owed["type"], owed["data"])
            self._logged_header = self._logged_header or owed["type"] == SNAPSHOT

        # 10. Build the request from the log alone (REQ-3/4/5) and freeze it
        #     (REQ-7); the dev invariant rebuilds it from a fresh log.
        request = FrozenRequest.build(
            turn=turn,
            step=step,
            boundary=boundary,
            header=header,
            messages=request_messages(header, derived, self.revision),
        )
        if self.check_requests:
            check_request(self.session.events, request, self.revision)

        # 11. Dispatch: observers see the frozen request, then the provider
        #     answers; a cancel or dispose races the call.
        await self.hooks.dispatch.dispatch(
            DispatchContext(loop=self, request=request, signal=signal)
        )
        self.requests.append(request)
        reply = await self._dispatch(request, signal)
        self.replies.append(reply)

        # 12. The answer joins the log, with its usage (incl. cache reads).
        content = reply.content
        if reply.finish == "max-tokens":
            content = [b for b in content if b.get("type") != "tool-call"]
        message: JsonObject = {"turn": turn, "step": step, "content": content}
        if reply.usage is not None:
            message["usage"] = reply.usage
        if content or reply.usage is not None:
            self.append("assistant/message", message, surface_op="append")

        # 13. Tool calls, one after another: tool/call, tool/result; then the
        #     post-execute additional context, after ALL results of the step,
        #     so call/result adjacency on the surface is never broken.
        calls = [b for b in content if b.get("type") == "tool-call"]
        extra: list[Content] = []
        for call in calls:
            extra.extend(await self._run_tool(turn, step, call, signal))
        for context in extra:
            self.append(
                "context/message",
                {"content": content_blocks(context), "source": POST_EXECUTE_SOURCE},
                surface_op="append",
            )

        # 14. Close the step; continue while the model calls tools.
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
        if self._disposed:
            raise _TurnEnd({"kind": "disposed"})
        if self._cancel is not None:
            reason: JsonObject = {"kind": "aborted"}
            if self._cancel[0] is not None:
                reason["reason"] = self._cancel[0]
            raise _TurnEnd(reason)

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
        self, request: FrozenRequest, signal: AbortSignal
    ) -> ProviderReply:
        self._checkpoint()
        call = asyncio.ensure_future(self.provider.complete(request, signal))
        aborted = asyncio.ensure_future(signal.wait())
        try:
            await asyncio.wait({call, aborted}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            aborted.cancel()
            if not call.done():
                call.cancel()
                await asyncio.wait({call})
        if signal.aborted:
            if not call.cancelled():
                call.exception()
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
        result = await self._execute(context)
        self.append(
            "tool/result",
            {
                "turn": turn,
                "step": step,
                "callId": call_id,
                "content": content_blocks(result.content),
                "isError": result.is_error,
            },
            surface_op="append",
            source_event_seqs=[logged["seq"]],
        )
        outcomes = await self.hooks.post_execute.dispatch(
            PostExecuteContext(call=context, result=result)
        )
        return [outcome for outcome in outcomes if outcome]

    async def _execute(self, context: ToolContext) -> ToolResult:
        tool = self.tools.get(context.name)
        if tool is None:
            return ToolResult(content=f"unknown tool {context.name!r}", is_error=True)
        try:
            arguments = json.loads(context.arguments) if context.arguments else {}
            output = await tool.execute(arguments, context)
        except asyncio.CancelledError:
            raise
        except Exception as error:
            return ToolResult(content=f"{context.name} failed: {error}", is_error=True)
        if isinstance(output, ToolResult):
            return output
        return ToolResult(content=output)

    # ------------------------------------------------------------ turns

    async def _run_turn(
        self, content: list[JsonObject], source: JsonObject
    ) -> TurnResult:
        turn = self._last_turn + 1
        self._cancel = None
        self._running = True
        trigger = {"kind": "message", "source": source}
        step = 0
        error: BaseException | None = None
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
            self._close_step()
            reason = interrupted.reason
        except asyncio.CancelledError:
            self._close_step()
            self._end_turn(turn, {"kind": "aborted", "reason": "task cancelled"})
            raise
        except Exception as failure:
            error = failure
            self._close_step()
            reason = {"kind": "error", "step": step, "message": str(failure)}
            code = getattr(failure, "code", None)
            if isinstance(code, str):
                reason["code"] = code
        finally:
            self._running = False
            self._signal = None
        self._end_turn(turn, reason)
        if isinstance(error, RequestDiverges):
            raise error
        return TurnResult(turn=turn, reason=reason, steps=step, error=error)

    def _end_turn(self, turn: int, reason: JsonObject) -> None:
        self.append("turn/end", {"turn": turn, "reason": reason})

    def _close_step(self) -> None:
        if self._open_step is not None:
            turn, step = self._open_step
            self.append("step/end", {"turn": turn, "step": step})

    def _track(self, event: JsonObject) -> None:
        kind, data = event["type"], event["data"]
        if kind == "turn/start":
            self._open_turn = data.get("turn")
            if isinstance(self._open_turn, int):
                self._last_turn = max(self._last_turn, self._open_turn)
        elif kind == "turn/end":
            self._open_turn = None
            self._open_step = None
        elif kind == "step/start":
            self._open_step = (data.get("turn"), data.get("step"))
        elif kind == "step/end":
            self._open_step = None

    def _repair_open_turn(self) -> None:
        """Close a turn a crashed instance left open (``interrupted``)."""
        if self._open_turn is None:
            return
        self._close_step()
        self._end_turn(self._open_turn, {"kind": "interrupted"})

"""What the loop's listeners see: the seams (`Hooks`) and their contexts.

Each seam of docs/reference-harness.md's table is a `Waterfall` or a
`SerialHook` (`reqfold.reference.loop.waterfall`) on `Hooks`; each context is the
frozen record a listener of that seam receives. A context names the loop
as a `LoopHandle`, the part of `reqfold.reference.loop.agent.AgentLoop` a listener
may use (this module does not import the loop, which imports it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from reqfold.reference.json_values import JsonObject
from reqfold.reference.loop.abort import AbortSignal
from reqfold.reference.loop.freeze import FrozenObject
from reqfold.reference.loop.frozen_request import FrozenRequest
from reqfold.reference.loop.tools import Content, ToolResult
from reqfold.reference.loop.waterfall import SerialHook, Waterfall
from reqfold.reference.revisions import ALL_REVISIONS, Revision
from reqfold.reference.session_log import SessionLog

EventListener = Callable[[FrozenObject], None]
"""A session-event listener: called with a deep-frozen copy of each event."""


class LoopHandle(Protocol):
    """What a listener may do with the loop running it (an `AgentLoop`)."""

    session: SessionLog
    revision: Revision

    def append(
        self,
        kind: str,
        data: JsonObject,
        *,
        surface_op: Any = None,
        source_event_seqs: list[int] | None = None,
    ) -> FrozenObject:
        """Append an event: persist it, log it, notify listeners."""

    def inject(
        self, content: Content, *, source: Mapping[str, Any] | None = None
    ) -> FrozenObject:
        """Log a durable ``context/message``."""

    def cancel(self, reason: str | None = None) -> None:
        """Abort the running turn."""

    def dispose(self) -> None:
        """End the instance."""


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

    loop: LoopHandle
    turn: int
    step: int


@dataclass(frozen=True, slots=True, kw_only=True)
class PrefixContext:
    """What a session-prefix listener knows; honour `signal` in slow work."""

    loop: LoopHandle
    turn: int
    signal: AbortSignal


@dataclass(frozen=True, slots=True, kw_only=True)
class PreStepContext:
    """What a pre-step listener knows (compaction counts `session_prefix`)."""

    loop: LoopHandle
    turn: int
    step: int
    system: str
    session_prefix: tuple[FrozenObject, ...]
    signal: AbortSignal


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestContext:
    """What a request-config listener knows."""

    loop: LoopHandle
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

    loop: LoopHandle
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

    loop: LoopHandle
    request: FrozenRequest
    signal: AbortSignal


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolContext:
    """What a tool (or a post-execute listener) knows about its call."""

    loop: LoopHandle
    turn: int
    step: int
    call_id: str
    name: str
    arguments: str
    """The raw arguments string, exactly as the model sent it."""
    signal: AbortSignal


@dataclass(frozen=True, slots=True, kw_only=True)
class PostExecuteContext:
    """What a post-execute listener sees: the call and its logged result."""

    call: ToolContext
    result: ToolResult


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

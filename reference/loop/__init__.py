"""The reference agent loop: the harness every rule of docs/spec.md is shown by.

The shell around the pure codec and session log: asyncio turns and steps
(`reqfold.reference.loop.agent`), the seams listeners plug into and the contexts
they see (`reqfold.reference.loop.contexts`, `reqfold.reference.loop.waterfall`), tool
calls (`reqfold.reference.loop.tool_calls`), cancel and dispose
(`reqfold.reference.loop.abort`), deep freezing (`reqfold.reference.loop.freeze`), the
dev-mode request invariant (`reqfold.reference.loop.invariant`), tools
(`reference.loop.tools`), compaction (`reference.loop.compaction`) and the
httpx chat-completions client (`reqfold.reference.loop.client`).
docs/reference-harness.md is the guided tour.
"""

from reqfold.reference.loop.abort import AbortSignal
from reqfold.reference.loop.agent import AgentLoop, TurnInterrupted, TurnResult
from reqfold.reference.loop.client import (
    ChatCompletionsClient,
    Provider,
    ProviderReply,
    map_usage,
)
from reqfold.reference.loop.clock import Clock, counter_clock, wall_clock
from reqfold.reference.loop.compaction import Compactor, estimate_tokens
from reqfold.reference.loop.contexts import (
    AssembleContext,
    Assembly,
    DispatchContext,
    Framing,
    Hooks,
    PostExecuteContext,
    PrefixContext,
    PreStepContext,
    RequestContext,
    RequestMessagesContext,
    ToolContext,
)
from reqfold.reference.loop.errors import (
    AgentError,
    ListenerCancelled,
    LoopDisposed,
    NoModel,
    PersistenceFailed,
    ProviderError,
    ProviderProtocolError,
    RequestDiverges,
)
from reqfold.reference.loop.freeze import deep_freeze, is_frozen, thaw
from reqfold.reference.loop.frozen_request import FrozenRequest
from reqfold.reference.loop.invariant import check_request
from reqfold.reference.loop.persistence import create_session_file, open_session_file
from reqfold.reference.loop.tools import Tool, ToolResult

__all__ = [
    "AbortSignal",
    "AgentError",
    "AgentLoop",
    "AssembleContext",
    "Assembly",
    "ChatCompletionsClient",
    "Clock",
    "Compactor",
    "DispatchContext",
    "Framing",
    "FrozenRequest",
    "Hooks",
    "ListenerCancelled",
    "LoopDisposed",
    "NoModel",
    "PersistenceFailed",
    "PostExecuteContext",
    "PreStepContext",
    "PrefixContext",
    "Provider",
    "ProviderError",
    "ProviderProtocolError",
    "ProviderReply",
    "RequestContext",
    "RequestDiverges",
    "RequestMessagesContext",
    "Tool",
    "ToolContext",
    "ToolResult",
    "TurnInterrupted",
    "TurnResult",
    "check_request",
    "counter_clock",
    "create_session_file",
    "deep_freeze",
    "estimate_tokens",
    "is_frozen",
    "map_usage",
    "open_session_file",
    "thaw",
    "wall_clock",
]

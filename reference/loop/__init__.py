"""The reference agent loop: the harness every rule of docs/spec.md is shown by.

The shell around the pure codec and session log: asyncio turns and steps
(`reference.loop.agent`), the seams listeners plug into and the contexts
they see (`reference.loop.contexts`, `reference.loop.waterfall`), tool
calls (`reference.loop.tool_calls`), cancel and dispose
(`reference.loop.abort`), deep freezing (`reference.loop.freeze`), the
dev-mode request invariant (`reference.loop.invariant`), tools
(`reference.loop.tools`), compaction (`reference.loop.compaction`) and the
httpx chat-completions client (`reference.loop.client`).
docs/reference-harness.md is the guided tour.
"""

from reference.loop.abort import AbortSignal
from reference.loop.agent import AgentLoop, TurnResult
from reference.loop.client import (
    ChatCompletionsClient,
    Provider,
    ProviderReply,
    map_usage,
)
from reference.loop.clock import Clock, counter_clock, wall_clock
from reference.loop.compaction import Compactor, estimate_tokens
from reference.loop.contexts import (
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
from reference.loop.errors import (
    AgentError,
    ListenerCancelled,
    LoopDisposed,
    NoModel,
    PersistenceFailed,
    ProviderError,
    ProviderProtocolError,
    RequestDiverges,
)
from reference.loop.freeze import deep_freeze, is_frozen, thaw
from reference.loop.frozen_request import FrozenRequest
from reference.loop.invariant import check_request
from reference.loop.persistence import create_session_file, open_session_file
from reference.loop.tools import Tool, ToolResult

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

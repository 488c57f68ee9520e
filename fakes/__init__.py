"""A fake LLM provider that simulates prompt caching, for harness tests.

It speaks real provider wire formats (DeepSeek/OpenAI chat completions,
Anthropic messages, the OpenAI Responses API), answers with scripted
replies, tool calls and faults, and reports cache usage the way each
provider does, computed by a prefix cache index modelled on serving
engines. For every request it also says
*why* the cache missed: the first point where the prompt diverged from the
closest earlier request.

In-process::

    provider = FakeProvider("deepseek")
    provider.push(Reply(text="hello"), Reply(tool_calls=(ToolCall.of("ls", {}),)))
    async with httpx.AsyncClient(transport=FakeTransport(provider),
                                 base_url="http://fake") as client:
        ...
    provider.last_request.usage, provider.last_request.diagnostic

Out of process: `reqfold fake serve --dialect deepseek` prints its base URL,
and the control surface under `/_fake/` scripts it and reads captures.

`fakes` imports nothing from `reference` or `conformance`.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from reqfold.fakes.cache_index import PrefixCacheIndex
from reqfold.fakes.capture import (
    CapturedRequest,
    CaptureLog,
    dump_capture_jsonl,
    dump_captured_request,
)
from reqfold.fakes.clock import LogicalClock
from reqfold.fakes.diagnostics import Diagnostic, Divergence
from reqfold.fakes.dialects.registry import (
    ANTHROPIC,
    DEEPSEEK,
    OPENAI,
    PROFILES,
    get_profile,
)
from reqfold.fakes.errors import FakeProviderError, InvalidRequest, ScriptError
from reqfold.fakes.gate import Gate
from reqfold.fakes.http import HttpRequest, ResponsePlan, key_digest
from reqfold.fakes.profiles import Profile
from reqfold.fakes.provider import FakeProvider
from reqfold.fakes.script import (
    Fault,
    Reply,
    Script,
    ScriptedRequest,
    ToolCall,
    overloaded,
    parse_script_item,
    rate_limited,
    server_error,
    slow_first_byte,
    stream_cut,
)
from reqfold.fakes.stats import ProviderStats, dump_stats
from reqfold.fakes.tokenizer import TOKENIZER_NAME, count_tokens, tokenize

if TYPE_CHECKING:
    from reqfold.fakes.transport import FakeTransport, route_provider

_LAZY = {"FakeTransport", "route_provider", "transport"}
"""`reqfold.fakes.transport` and its names, imported on first use: it imports httpx,
which a process serving the fake (`reqfold fake serve`) never needs: a
share of its start-up, and every test run starts several."""

if not TYPE_CHECKING:  # mypy sees the imports above and checks every name

    def __getattr__(name: str) -> Any:
        """`reqfold.fakes.transport` and its names, imported when first asked for."""
        if name in _LAZY:
            transport = import_module("reqfold.fakes.transport")
            return transport if name == "transport" else getattr(transport, name)
        raise AttributeError(f"module 'fakes' has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted({*globals(), *_LAZY})


__all__ = [
    "ANTHROPIC",
    "DEEPSEEK",
    "OPENAI",
    "PROFILES",
    "TOKENIZER_NAME",
    "CaptureLog",
    "CapturedRequest",
    "Diagnostic",
    "Divergence",
    "FakeProvider",
    "FakeProviderError",
    "FakeTransport",
    "Fault",
    "Gate",
    "HttpRequest",
    "InvalidRequest",
    "LogicalClock",
    "PrefixCacheIndex",
    "Profile",
    "ProviderStats",
    "Reply",
    "ResponsePlan",
    "Script",
    "ScriptError",
    "ScriptedRequest",
    "ToolCall",
    "count_tokens",
    "dump_capture_jsonl",
    "dump_captured_request",
    "dump_stats",
    "get_profile",
    "key_digest",
    "overloaded",
    "parse_script_item",
    "rate_limited",
    "route_provider",
    "server_error",
    "slow_first_byte",
    "stream_cut",
    "tokenize",
]

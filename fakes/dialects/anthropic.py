"""Anthropic messages, with `cache_control` breakpoints.

Longer than the house's usual ~500 lines: the module is one dialect's whole
wire format (request validation, breakpoints and their cache rules,
responses and streaming), kept together so it reads against the provider's
documentation in one place.

Endpoint: `POST /v1/messages` (also `/anthropic/v1/messages`, the mount
point DeepSeek and Kimi use for their Anthropic-compatible surfaces).

Cache rules (Anthropic's prompt caching documentation; docs/fake-provider.md):

- The prefix is tools, then system, then messages; `tool_choice` and
  `thinking` form a small parameter segment at the start of the messages
  level, so changing them keeps tools and system cached but not messages.
- Segments are content blocks: one per tool, per system block, per message
  content block. `cache_control` itself is not part of a block's identity.
- Content shape: a string `content` (or `system`) is the documented
  shorthand for one text block, so it renders as that block: switching
  between the two shapes keeps the cache.
- Diagnostics: a request's `diagnostics` object opts in to the API's own
  cache diagnostics (`reqfold.fakes.native_diagnostics`); the message (in
  a stream, `message_start`'s) then carries `diagnostics`.
- Entries are written only at breakpoints (blocks carrying `cache_control`,
  or the last block when the request has a top-level `cache_control`),
  and only when the prefix up to the breakpoint has at least the model's
  minimum of tokens. At most `breakpoint_limit` (4) breakpoints, else the
  real API's 400; a `"1h"` breakpoint may not follow a `"5m"` one.
- Reads: for each breakpoint, the breakpoint position and up to
  `lookback_blocks` (20) earlier block boundaries are probed; the deepest
  live entry wins (position A). With B the last 1-hour breakpoint after A
  and C the last breakpoint, the usage reports reads A, 1-hour writes B-A,
  5-minute writes C-B, and `input_tokens` for the rest.
- TTL 5 minutes (1 hour for `"ttl": "1h"`), refreshed by every hit.

Usage: `input_tokens`, `cache_creation_input_tokens`,
`cache_read_input_tokens`, `cache_creation.{ephemeral_5m_input_tokens,
ephemeral_1h_input_tokens}`, `output_tokens`; total input is the sum of the
first three. Streams carry the input side in `message_start` and the
cumulative `output_tokens` in `message_delta`; frames are
`event: <type>\\ndata: <json>\\n\\n` with no `[DONE]`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypedDict

from reqfold.fakes.cache_index import PrefixCacheIndex
from reqfold.fakes.dialects.common import derive_hex, request_object, split_text
from reqfold.fakes.errors import InvalidRequest
from reqfold.fakes.jsontypes import (
    JsonObject,
    JsonValue,
    dumps_compact,
    json_object,
    type_name,
)
from reqfold.fakes.profiles import Profile, RenderSection
from reqfold.fakes.prompt import RenderedPrompt, Segment
from reqfold.fakes.routes import (
    RequestTexts,
    content_text,
    last_user_text,
    tool_names,
)
from reqfold.fakes.script import Reply

MESSAGES_PATHS = ("/v1/messages", "/anthropic/v1/messages")
WIRE = "messages"
"""The wire format's name (the dialect's own name is in the registry)."""
TTL_CLASSES = ("5m", "1h")
STOP_REASONS = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}


class MessagesUsage(TypedDict):
    """The usage object of a message."""

    input_tokens: int
    cache_creation_input_tokens: int
    cache_read_input_tokens: int
    cache_creation: JsonObject
    output_tokens: int


class MessagesErrorBody(TypedDict):
    """`{"type": "error", "error": {type, message}}`."""

    type: str
    error: JsonObject


@dataclass(frozen=True, slots=True, kw_only=True)
class MessagesCall:
    """A validated messages request; `body` is the parsed JSON."""

    body: JsonObject
    model: str
    messages: list[JsonValue]
    tools: list[JsonValue]
    stream: bool
    automatic: str | None
    diagnostics: bool = False  # the request opted in to cache diagnostics
    previous_message_id: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class BreakpointResult:
    """Cache accounting of one messages request, in tokens."""

    read: int
    written_5m: int
    written_1h: int
    input: int
    matched: int
    cacheable: int

    @property
    def written_total(self) -> int:
        """All tokens written to the cache."""
        return self.written_5m + self.written_1h


@dataclass(frozen=True, slots=True, kw_only=True)
class MessagesAnswer:
    """Everything needed to render one successful answer."""

    profile: Profile
    index: int
    model: str
    reply: Reply
    tool_ids: tuple[str, ...]
    usage: MessagesUsage
    native: JsonObject = dataclasses.field(default_factory=dict)
    """Members the provider's own diagnostics add (`diagnostics`), if asked."""


# --- requests ---------------------------------------------------------------


def _expected(path: str, what: str, got: JsonValue) -> str:
    if got is None:
        return f"{path}: Field required ({what})"
    return f"{path}: Input should be {what}, got {type_name(got)}"


def _ttl_class(control: JsonValue, path: str) -> str:
    if not isinstance(control, dict):
        raise InvalidRequest(_expected(path, "an object", control), param=path)
    if control.get("type") != "ephemeral":
        raise InvalidRequest(
            f"{path}.type: Input should be 'ephemeral'", param=f"{path}.type"
        )
    ttl = control.get("ttl", "5m")
    if ttl not in TTL_CLASSES:
        raise InvalidRequest(
            f"{path}.ttl: Input should be '5m' or '1h'", param=f"{path}.ttl"
        )
    assert isinstance(ttl, str)
    return ttl


def _check_block(block: JsonValue, path: str) -> None:
    if not isinstance(block, dict):
        raise InvalidRequest(_expected(path, "a valid dictionary", block), param=path)
    kind = block.get("type")
    if not isinstance(kind, str):
        raise InvalidRequest(
            _expected(f"{path}.type", "a string", kind), param=f"{path}.type"
        )
    required: dict[str, tuple[tuple[str, type], ...]] = {
        "text": (("text", str),),
        "image": (("source", dict),),
        "document": (("source", dict),),
        "redacted_thinking": (("data", str),),
        "tool_use": (("id", str), ("name", str), ("input", dict)),
        "tool_result": (("tool_use_id", str),),
        "thinking": (("thinking", str),),
    }
    for key, kind_of in required.get(kind, ()):
        if not isinstance(block.get(key), kind_of):
            what = "a valid dictionary" if kind_of is dict else "a valid string"
            raise InvalidRequest(
                _expected(f"{path}.{key}", what, block.get(key)), param=f"{path}.{key}"
            )
    if kind == "tool_result":
        content = block.get("content")
        if content is not None and not isinstance(content, str | list):
            raise InvalidRequest(
                _expected(f"{path}.content", "a string or a list", content),
                param=f"{path}.content",
            )
    if "cache_control" in block:
        _ttl_class(block["cache_control"], f"{path}.cache_control")


TOOL_CHOICE_TYPES = ("auto", "any", "tool", "none")


def _check_choice_and_thinking(value: JsonObject) -> None:
    choice = value.get("tool_choice")
    if choice is not None:
        if not isinstance(choice, dict) or choice.get("type") not in TOOL_CHOICE_TYPES:
            raise InvalidRequest(
                _expected(
                    "tool_choice",
                    f"an object whose type is one of {', '.join(TOOL_CHOICE_TYPES)}",
                    choice,
                ),
                param="tool_choice",
            )
        if choice["type"] == "tool" and not isinstance(choice.get("name"), str):
            raise InvalidRequest(
                _expected("tool_choice.name", "a valid string", choice.get("name")),
                param="tool_choice.name",
            )
    thinking = value.get("thinking")
    if thinking is None:
        return
    if not isinstance(thinking, dict) or thinking.get("type") not in (
        "enabled",
        "disabled",
    ):
        raise InvalidRequest(
            _expected(
                "thinking", "an object whose type is enabled or disabled", thinking
            ),
            param="thinking",
        )
    budget = thinking.get("budget_tokens")
    if thinking["type"] == "enabled" and (
        isinstance(budget, bool) or not isinstance(budget, int)
    ):
        raise InvalidRequest(
            _expected("thinking.budget_tokens", "a valid integer", budget),
            param="thinking.budget_tokens",
        )


def parse_messages_request(value: JsonValue) -> MessagesCall:
    """Validate a parsed messages body.

    Raises:
        InvalidRequest: the body violates the API's request schema.
    """
    value = request_object(value)
    model = value.get("model")
    if not isinstance(model, str) or not model:
        raise InvalidRequest(
            _expected("model", "a non-empty string", model), param="model"
        )
    max_tokens = value.get("max_tokens")
    if (
        isinstance(max_tokens, bool)
        or not isinstance(max_tokens, int)
        or max_tokens < 1
    ):
        raise InvalidRequest(
            _expected("max_tokens", "an integer >= 1", max_tokens), param="max_tokens"
        )
    messages = value.get("messages")
    if not isinstance(messages, list):
        raise InvalidRequest(
            _expected("messages", "a valid list", messages), param="messages"
        )
    if not messages:
        raise InvalidRequest(
            "messages: at least one message is required", param="messages"
        )
    for position, message in enumerate(messages):
        path = f"messages.{position}"
        if not isinstance(message, dict):
            raise InvalidRequest(
                _expected(path, "a valid dictionary", message), param=path
            )
        if message.get("role") not in ("user", "assistant"):
            raise InvalidRequest(
                f"{path}.role: Input should be 'user' or 'assistant'",
                param=f"{path}.role",
            )
        content = message.get("content")
        if isinstance(content, list):
            for block_position, block in enumerate(content):
                _check_block(block, f"{path}.content.{block_position}")
        elif not isinstance(content, str):
            raise InvalidRequest(
                _expected(f"{path}.content", "a valid string or list", content),
                param=f"{path}.content",
            )
    system = value.get("system")
    if isinstance(system, list):
        for position, block in enumerate(system):
            _check_block(block, f"system.{position}")
            assert isinstance(block, dict)
            if block.get("type") != "text":
                raise InvalidRequest(
                    f"system.{position}.type: Input should be 'text'",
                    param=f"system.{position}.type",
                )
    elif system is not None and not isinstance(system, str):
        raise InvalidRequest(
            _expected("system", "a valid string or list", system), param="system"
        )
    tools = value.get("tools")
    if tools is not None:
        if not isinstance(tools, list):
            raise InvalidRequest(
                _expected("tools", "a valid list", tools), param="tools"
            )
        for position, tool in enumerate(tools):
            path = f"tools.{position}"
            if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
                raise InvalidRequest(
                    _expected(f"{path}.name", "a valid string", None), param=path
                )
            if "type" not in tool and not isinstance(tool.get("input_schema"), dict):
                raise InvalidRequest(
                    _expected(
                        f"{path}.input_schema",
                        "a valid dictionary",
                        tool.get("input_schema"),
                    ),
                    param=f"{path}.input_schema",
                )
            if "cache_control" in tool:
                _ttl_class(tool["cache_control"], f"{path}.cache_control")
    _check_choice_and_thinking(value)
    stream = value.get("stream")
    if stream is not None and not isinstance(stream, bool):
        raise InvalidRequest(
            _expected("stream", "a valid boolean", stream), param="stream"
        )
    automatic = None
    if "cache_control" in value:
        automatic = _ttl_class(value["cache_control"], "cache_control")
    diagnostics = value.get("diagnostics")
    previous = None
    if diagnostics is not None:
        if not isinstance(diagnostics, dict):
            raise InvalidRequest(
                _expected("diagnostics", "a valid dictionary", diagnostics),
                param="diagnostics",
            )
        previous = diagnostics.get("previous_message_id")
        if previous is not None and not isinstance(previous, str):
            raise InvalidRequest(
                _expected(
                    "diagnostics.previous_message_id", "a valid string", previous
                ),
                param="diagnostics.previous_message_id",
            )
    return MessagesCall(
        body=value,
        model=model,
        messages=messages,
        tools=tools if isinstance(tools, list) else [],
        stream=stream is True,
        automatic=automatic,
        diagnostics=isinstance(diagnostics, dict),
        previous_message_id=previous if isinstance(previous, str) else None,
    )


# --- prompt -----------------------------------------------------------------


def _without_control(block: JsonValue) -> JsonValue:
    if isinstance(block, dict) and "cache_control" in block:
        return {key: item for key, item in block.items() if key != "cache_control"}
    return block


def _breakpoint(block: JsonValue) -> str | None:
    if isinstance(block, dict) and isinstance(block.get("cache_control"), dict):
        control = block["cache_control"]
        assert isinstance(control, dict)
        ttl = control.get("ttl", "5m")
        return ttl if isinstance(ttl, str) else "5m"
    return None


def text_block(text: str) -> JsonObject:
    """The one text block a string `content` (or `system`) is shorthand for."""
    return {"type": "text", "text": text}


def messages_segments(
    call: MessagesCall, order: Sequence[RenderSection]
) -> list[Segment]:
    """The request's prompt segments (content blocks) in render order."""
    sections: dict[RenderSection, list[Segment]] = {
        "tools": [],
        "system": [],
        "messages": [],
    }
    for position, tool in enumerate(call.tools):
        value = _without_control(tool)
        sections["tools"].append(
            Segment(
                path=f"tools[{position}]",
                message_index=None,
                value=value,
                label="tool:",
                breakpoint=_breakpoint(tool),
            )
        )
    system = call.body.get("system")
    if isinstance(system, str) and system:
        sections["system"].append(
            Segment(
                path="system",
                message_index=None,
                value=text_block(system),
                label="system:",
            )
        )
    elif isinstance(system, list):
        for position, block in enumerate(system):
            value = _without_control(block)
            sections["system"].append(
                Segment(
                    path=f"system[{position}]",
                    message_index=None,
                    value=value,
                    label="system:",
                    breakpoint=_breakpoint(block),
                )
            )
    params: JsonObject = {
        key: call.body[key] for key in ("tool_choice", "thinking") if key in call.body
    }
    if params:
        sections["messages"].append(
            Segment(
                path="params",
                message_index=None,
                value=params,
                label="params:",
            )
        )
    for position, message in enumerate(call.messages):
        assert isinstance(message, dict)
        role = message.get("role")
        content = message.get("content")
        if isinstance(content, str):
            sections["messages"].append(
                Segment(
                    path=f"messages[{position}].content",
                    message_index=position,
                    value=text_block(content),
                    label=f"{role}:",
                )
            )
            continue
        assert isinstance(content, list)
        for block_position, block in enumerate(content):
            value = _without_control(block)
            sections["messages"].append(
                Segment(
                    path=f"messages[{position}].content[{block_position}]",
                    message_index=position,
                    value=value,
                    label=f"{role}:",
                    breakpoint=_breakpoint(block),
                )
            )
    segments = [segment for section in order for segment in sections[section]]
    if call.automatic is not None and segments and segments[-1].breakpoint is None:
        segments[-1] = segments[-1]._replace(breakpoint=call.automatic)
    return segments


def check_breakpoints(segments: Sequence[Segment], limit: int) -> None:
    """Enforce the breakpoint limit and the TTL order (1h before 5m).

    Raises:
        InvalidRequest: the real API's 400 for the same request.
    """
    marks = [
        segment.breakpoint for segment in segments if segment.breakpoint is not None
    ]
    if len(marks) > limit:
        raise InvalidRequest(
            f"A maximum of {limit} blocks with cache_control may be provided. "
            f"Found {len(marks)}."
        )
    seen_short = False
    for mark in marks:
        if mark == "5m":
            seen_short = True
        elif seen_short:
            raise InvalidRequest(
                "a ttl='1h' cache_control block must not come after a ttl='5m' "
                "cache_control block"
            )


# --- cache accounting -------------------------------------------------------


def _chain(root: bytes, digests: Sequence[bytes]) -> list[bytes]:
    blake = hashlib.blake2b
    keys: list[bytes] = []
    key = root
    for digest in digests:
        key = blake(key + digest, digest_size=16, person=b"reqfold-bp").digest()
        keys.append(key)
    return keys


def account_breakpoints(
    index: PrefixCacheIndex,
    root: bytes,
    prompt: RenderedPrompt,
    *,
    now: float,
    minimum: int,
    lookback: int,
    ttl_short: float | None,
    ttl_long: float | None,
) -> BreakpointResult:
    """Read and write breakpoint entries; returns the usage split."""
    keys = _chain(root, prompt.digests)
    ends = prompt.ends
    marks = [
        (position, segment.breakpoint)
        for position, segment in enumerate(prompt.segments)
        if segment.breakpoint is not None
    ]
    hit_position = -1
    for position, _ in marks:
        for probe in range(position, max(-1, position - lookback - 1), -1):
            if probe <= hit_position:
                break
            if index.get(keys[probe], now) is not None:
                hit_position = probe
                break
    read = ends[hit_position] if hit_position >= 0 else 0
    if hit_position >= 0:
        index.touch(keys[hit_position], now)
    long_end = read
    short_end = read
    written_any = False
    for position, mark in marks:
        end = ends[position]
        if end < minimum or end <= read:
            continue
        ttl = ttl_long if mark == "1h" else ttl_short
        index.put(keys[position], end, end, now, ttl, merge_ttl=True)
        written_any = True
        if mark == "1h":
            long_end = max(long_end, end)
        short_end = max(short_end, end)
    index.evict()
    n = prompt.n_tokens
    cacheable = max((ends[position] for position, _ in marks), default=0)
    if not written_any:
        return BreakpointResult(
            read=read,
            written_5m=0,
            written_1h=0,
            input=n - read,
            matched=read,
            cacheable=cacheable if cacheable >= minimum else 0,
        )
    short_end = max(short_end, long_end)
    return BreakpointResult(
        read=read,
        written_1h=long_end - read,
        written_5m=short_end - long_end,
        input=n - short_end,
        matched=read,
        cacheable=cacheable if cacheable >= minimum else 0,
    )


def messages_usage(result: BreakpointResult, output: int) -> MessagesUsage:
    """The usage object for a result and an output token count."""
    return MessagesUsage(
        input_tokens=result.input,
        cache_creation_input_tokens=result.written_total,
        cache_read_input_tokens=result.read,
        cache_creation={
            "ephemeral_5m_input_tokens": result.written_5m,
            "ephemeral_1h_input_tokens": result.written_1h,
        },
        output_tokens=output,
    )


# --- responses --------------------------------------------------------------


def tool_use_ids(profile: Profile, index: int, reply: Reply) -> tuple[str, ...]:
    """Tool-use ids: scripted ones, else deterministic `toolu_...` ones."""
    return tuple(
        call.id
        if call.id is not None
        else "toolu_" + derive_hex(profile.seed, index, f"tool{n}")
        for n, call in enumerate(reply.tool_calls)
    )


def _input_object(arguments: str) -> JsonObject:
    try:
        value = json.loads(arguments)
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def _signature(answer: MessagesAnswer) -> str:
    return derive_hex(answer.profile.seed, answer.index, "signature", 48)


def content_blocks(answer: MessagesAnswer) -> list[JsonObject]:
    """The reply's content blocks: thinking, text, tool_use, in that order."""
    reply = answer.reply
    blocks: list[JsonObject] = []
    if reply.reasoning is not None:
        blocks.append(
            {
                "type": "thinking",
                "thinking": reply.reasoning,
                "signature": _signature(answer),
            }
        )
    if reply.text is not None and (reply.text or not reply.tool_calls):
        blocks.append({"type": "text", "text": reply.text})
    for call, call_id in zip(reply.tool_calls, answer.tool_ids, strict=True):
        blocks.append(
            {
                "type": "tool_use",
                "id": call_id,
                "name": call.name,
                "input": _input_object(call.arguments),
            }
        )
    return blocks


def stop_reason(reply: Reply) -> str:
    """The Anthropic stop reason for a reply's finish reason."""
    reason = reply.effective_finish_reason
    return STOP_REASONS.get(reason, reason)


def message_id(answer: MessagesAnswer) -> str:
    """A deterministic `msg_...` id."""
    return "msg_" + derive_hex(answer.profile.seed, answer.index, "message")


def emitted_message(answer: MessagesAnswer) -> JsonObject:
    """The assistant message a faithful harness sends back next turn."""
    return {"role": "assistant", "content": list(content_blocks(answer))}


def messages_body(answer: MessagesAnswer) -> JsonObject:
    """The non-streaming `message` body."""
    return {
        "id": message_id(answer),
        "type": "message",
        "role": "assistant",
        "model": answer.model,
        "content": list(content_blocks(answer)),
        "stop_reason": stop_reason(answer.reply),
        "stop_sequence": None,
        "usage": json_object(answer.usage),
        **answer.native,
    }


def _event(kind: str, payload: JsonObject) -> bytes:
    return (
        f"event: {kind}\ndata: ".encode()
        + dumps_compact(payload).encode("utf-8")
        + b"\n\n"
    )


PING_FRAME = _event("ping", {"type": "ping"})


def messages_stream_frames(answer: MessagesAnswer) -> list[bytes]:
    """The SSE event frames of a streamed answer."""
    usage = answer.usage
    size = answer.profile.chunk_chars
    start_usage: JsonObject = {**json_object(usage), "output_tokens": 1}
    frames = [
        _event(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": message_id(answer),
                    "type": "message",
                    "role": "assistant",
                    "model": answer.model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": start_usage,
                    **answer.native,
                },
            },
        ),
        PING_FRAME,
    ]
    # tool_use blocks follow the scripted calls in order; ids may repeat, so
    # match them by position, never by id.
    calls = iter(answer.reply.tool_calls)
    for position, block in enumerate(content_blocks(answer)):
        kind = block["type"]
        if kind == "thinking":
            opening: JsonObject = {"type": "thinking", "thinking": "", "signature": ""}
            deltas: list[JsonObject] = [
                {"type": "thinking_delta", "thinking": piece}
                for piece in split_text(answer.reply.reasoning or "", size)
            ]
            deltas.append({"type": "signature_delta", "signature": _signature(answer)})
        elif kind == "text":
            opening = {"type": "text", "text": ""}
            deltas = [
                {"type": "text_delta", "text": piece}
                for piece in split_text(answer.reply.text or "", size)
            ]
        else:
            call = next(calls)
            opening = {
                "type": "tool_use",
                "id": block["id"],
                "name": block["name"],
                "input": {},
            }
            deltas = [
                {"type": "input_json_delta", "partial_json": piece}
                for piece in split_text(call.arguments, size)
            ]
        frames.append(
            _event(
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": position,
                    "content_block": opening,
                },
            )
        )
        frames.extend(
            _event(
                "content_block_delta",
                {"type": "content_block_delta", "index": position, "delta": delta},
            )
            for delta in deltas
        )
        frames.append(
            _event(
                "content_block_stop", {"type": "content_block_stop", "index": position}
            )
        )
    frames.append(
        _event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {
                    "stop_reason": stop_reason(answer.reply),
                    "stop_sequence": None,
                },
                "usage": {"output_tokens": usage["output_tokens"]},
            },
        )
    )
    frames.append(_event("message_stop", {"type": "message_stop"}))
    return frames


def messages_error_body(
    message: str, *, error_type: str = "invalid_request_error"
) -> MessagesErrorBody:
    """The `{"type": "error", "error": {...}}` envelope."""
    return MessagesErrorBody(
        type="error", error={"type": error_type, "message": message}
    )


FAULT_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
FAULT_MESSAGES = {
    429: "Number of request tokens has exceeded your rate limit.",
    500: "Internal server error",
    529: "Overloaded",
}


def messages_fault_body(
    status: int, message: str | None, error_type: str | None
) -> MessagesErrorBody:
    """The error body a scripted fault sends on the messages endpoint."""
    kind = error_type or FAULT_TYPES.get(
        status, "api_error" if status >= 500 else "invalid_request_error"
    )
    return messages_error_body(
        message or FAULT_MESSAGES.get(status, f"Scripted error (HTTP {status})."),
        error_type=kind,
    )


def request_texts(body: JsonObject) -> RequestTexts:
    """What routes match a messages request by: its ``system`` (a string or
    text blocks), its last user message with text blocks, its tools."""
    return RequestTexts(
        system=content_text(body.get("system")),
        last_user=last_user_text(body.get("messages")),
        tools=tool_names(body),
    )

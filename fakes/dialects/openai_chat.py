"""OpenAI-compatible chat completions, in the DeepSeek and OpenAI flavours.

Longer than the house's usual ~500 lines: the module is one dialect's whole
wire format (request validation, prompt segments, responses and streaming),
kept together so it reads against the providers' documentation in one
place; the parts every dialect shares live in `reqfold.fakes.dialects.base`.

Endpoints: `POST /chat/completions` and `POST /v1/chat/completions`.

Requests (`parse_chat_request`) are validated like the real APIs do, and a
violation becomes a 400 `invalid_request_error` naming the field
(`messages[2].tool_calls[0].function.arguments`). The parsed body itself is
kept untouched (member order included) for the prompt and the capture log.

Prompt segments (`chat_segments`): one per tool definition (plus
`response_format`, which acts as a prefix of the system prompt), one per
leading system/developer message, one per remaining message, laid out in
the profile's `render_order` (tools, system, messages by default). Each
segment's text is the compact JSON of the value, so any change of a byte
in a string, or of member order, changes the tokens from there on.

Responses, as the chat-completions API references of DeepSeek and OpenAI
give them:

- non-streaming: `chat.completion` with `choices[0].message` (`content`,
  `reasoning_content` for DeepSeek, `tool_calls` with `arguments` as a
  string) and `usage`;
- streaming: `data: <chunk>` frames, first a role chunk, then reasoning,
  text and tool-call deltas (a call's first fragment carries `id`, `type`,
  `function.name` and empty `arguments`; later fragments only argument
  slices), then the finish chunk, then `data: [DONE]`. DeepSeek puts
  `usage` on the finish chunk always; OpenAI sends it in an extra
  `choices: []` chunk only with `stream_options.include_usage`, and then
  every other chunk carries `"usage": null`.

Usage fields: DeepSeek `prompt_cache_hit_tokens` + `prompt_cache_miss_tokens`
(= `prompt_tokens`) and `prompt_tokens_details.cached_tokens` (equal to the
hit count); OpenAI `prompt_tokens_details.cached_tokens` (present, 0, even
below the 1024-token minimum).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypedDict

from reqfold.fakes.dialects.common import (
    derive_hex,
    derive_uuid,
    request_object,
    split_text,
)
from reqfold.fakes.errors import InvalidRequest
from reqfold.fakes.jsontypes import (
    JsonObject,
    JsonValue,
    dumps_compact,
    json_object,
    type_name,
)
from reqfold.fakes.profiles import Profile, RenderSection
from reqfold.fakes.prompt import Segment
from reqfold.fakes.routes import (
    RequestTexts,
    joined,
    last_user_text,
    role_texts,
    tool_names,
)
from reqfold.fakes.script import Reply

CHAT_PATHS = ("/chat/completions", "/v1/chat/completions")
WIRE = "chat completions"
"""The wire format's name, shared by every chat-completions dialect."""
ROLES = ("system", "developer", "user", "assistant", "tool")
SYSTEM_ROLES = ("system", "developer")


class ChatUsage(TypedDict, total=False):
    """The usage object of a chat completion (both flavours)."""

    completion_tokens: int
    prompt_tokens: int
    prompt_cache_hit_tokens: int
    prompt_cache_miss_tokens: int
    total_tokens: int
    prompt_tokens_details: JsonObject
    completion_tokens_details: JsonObject


class ChatErrorBody(TypedDict):
    """`{"error": {...}}`, the OpenAI/DeepSeek error envelope."""

    error: JsonObject


@dataclass(frozen=True, slots=True, kw_only=True)
class ChatCall:
    """A validated chat-completions request; `body` is the parsed JSON."""

    body: JsonObject
    model: str
    messages: list[JsonValue]
    tools: list[JsonValue]
    stream: bool
    include_usage: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class ChatFlavour:
    """What one chat-completions provider answers differently, as data
    (the dialect registry, `reqfold.fakes.dialects.registry`, gives each
    dialect its flavour)."""

    uuid_ids: bool
    """Completion and tool-call ids are UUIDs, not `chatcmpl-`/`call_` hex."""
    hit_miss_usage: bool
    """Usage reports `prompt_cache_hit_tokens`/`prompt_cache_miss_tokens`
    (DeepSeek's fields and order), not OpenAI's detailed members."""
    reasoning_content: bool
    """Answers carry the reply's reasoning as `reasoning_content`."""
    empty_content: bool
    """`content` is `""` where OpenAI sends `null` or nothing (a tool-call
    answer's content, the last stream chunk's delta)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ChatAnswer:
    """Everything needed to render one successful answer."""

    flavour: ChatFlavour
    profile: Profile
    index: int
    created: int
    model: str
    reply: Reply
    call_ids: tuple[str, ...]
    usage: ChatUsage


# --- requests ---------------------------------------------------------------


def parse_chat_request(value: JsonValue) -> ChatCall:
    """Validate a parsed chat-completions body.

    Raises:
        InvalidRequest: the body violates the API's request schema.
    """
    value = request_object(value)
    model = value.get("model")
    if not isinstance(model, str) or not model:
        raise InvalidRequest(
            _expected("model", "a non-empty string", model), param="model"
        )
    messages = value.get("messages")
    if not isinstance(messages, list):
        raise InvalidRequest(
            _expected("messages", "an array", messages), param="messages"
        )
    if not messages:
        raise InvalidRequest(
            "'messages' must contain at least one message", param="messages"
        )
    for position, message in enumerate(messages):
        _check_message(message, f"messages[{position}]")
    tools = value.get("tools")
    if tools is not None:
        if not isinstance(tools, list):
            raise InvalidRequest(_expected("tools", "an array", tools), param="tools")
        for position, tool in enumerate(tools):
            _check_tool(tool, f"tools[{position}]")
    stream = _optional(value, "stream", bool) is True
    include_usage = False
    options = value.get("stream_options")
    if options is not None:
        if not isinstance(options, dict):
            raise InvalidRequest(
                _expected("stream_options", "an object", options),
                param="stream_options",
            )
        if not stream:
            raise InvalidRequest(
                "'stream_options' is only allowed when 'stream' is true",
                param="stream_options",
            )
        include_usage = (
            _optional(options, "include_usage", bool, "stream_options.") is True
        )
    for name in ("temperature", "top_p", "presence_penalty", "frequency_penalty"):
        number = value.get(name)
        if number is not None and (
            isinstance(number, bool)
            or not isinstance(number, int | float)
            or not math.isfinite(number)
        ):
            raise InvalidRequest(_expected(name, "a number", number), param=name)
    for name in ("max_tokens", "max_completion_tokens", "n", "seed"):
        integer = value.get(name)
        if integer is not None and (
            isinstance(integer, bool) or not isinstance(integer, int)
        ):
            raise InvalidRequest(_expected(name, "an integer", integer), param=name)
        if isinstance(integer, int) and name != "seed" and integer < 0:
            raise InvalidRequest(f"'{name}' must be >= 0, got {integer}", param=name)
    n = value.get("n")
    if isinstance(n, int) and n != 1:
        raise InvalidRequest(
            "this fake only generates one choice ('n' must be 1)", param="n"
        )
    _check_options(value)
    stop = value.get("stop")
    if (
        stop is not None
        and not isinstance(stop, str)
        and (not isinstance(stop, list) or not all(isinstance(i, str) for i in stop))
    ):
        raise InvalidRequest(
            _expected("stop", "a string or an array of strings", stop), param="stop"
        )
    return ChatCall(
        body=value,
        model=model,
        messages=messages,
        tools=tools if isinstance(tools, list) else [],
        stream=stream,
        include_usage=include_usage,
    )


TOOL_CHOICES = ("none", "auto", "required")
RESPONSE_FORMATS = ("text", "json_object", "json_schema")
THINKING_TYPES = ("enabled", "disabled")
PART_MEMBERS = {
    "text": ("text", str),
    "image_url": ("image_url", dict),
    "input_audio": ("input_audio", dict),
    "file": ("file", dict),
}


def _check_options(value: JsonObject) -> None:
    """Type-check the optional members both flavours accept."""
    choice = value.get("tool_choice")
    if choice is not None:
        if isinstance(choice, dict):
            function = choice.get("function")
            if choice.get("type") != "function" or not (
                isinstance(function, dict) and isinstance(function.get("name"), str)
            ):
                raise InvalidRequest(
                    "'tool_choice' as an object must be "
                    '{"type": "function", "function": {"name": ...}}',
                    param="tool_choice",
                )
        elif choice not in TOOL_CHOICES:
            raise InvalidRequest(
                _expected(
                    "tool_choice",
                    f"one of {', '.join(TOOL_CHOICES)} or an object",
                    choice,
                ),
                param="tool_choice",
            )
    response_format = value.get("response_format")
    if response_format is not None and (
        not isinstance(response_format, dict)
        or response_format.get("type") not in RESPONSE_FORMATS
    ):
        raise InvalidRequest(
            _expected(
                "response_format",
                f"an object whose 'type' is one of {', '.join(RESPONSE_FORMATS)}",
                response_format,
            ),
            param="response_format",
        )
    thinking = value.get("thinking")
    if thinking is not None and (
        not isinstance(thinking, dict) or thinking.get("type") not in THINKING_TYPES
    ):
        raise InvalidRequest(
            _expected(
                "thinking", 'an object {"type": "enabled" or "disabled"}', thinking
            ),
            param="thinking",
        )
    for name in ("reasoning_effort", "user", "user_id"):
        _optional(value, name, str)
    for name in ("logprobs", "parallel_tool_calls"):
        _optional(value, name, bool)
    top = value.get("top_logprobs")
    if top is not None and (isinstance(top, bool) or not isinstance(top, int)):
        raise InvalidRequest(
            _expected("top_logprobs", "an integer", top), param="top_logprobs"
        )


def _expected(path: str, what: str, got: JsonValue) -> str:
    if got is None:
        return f"'{path}' is required and must be {what}"
    return f"'{path}' must be {what}, got {type_name(got)}"


def _optional(
    container: JsonObject, key: str, kind: type, prefix: str = ""
) -> JsonValue:
    value = container.get(key)
    if value is not None and not isinstance(value, kind):
        what = {bool: "a boolean", str: "a string", dict: "an object", list: "an array"}
        raise InvalidRequest(
            _expected(prefix + key, what.get(kind, kind.__name__), value),
            param=prefix + key,
        )
    return value


def _check_content(content: JsonValue, path: str, *, allow_null: bool) -> None:
    if isinstance(content, str) or (content is None and allow_null):
        return
    if content is None:
        raise InvalidRequest(f"'{path}' is required", param=path)
    if not isinstance(content, list):
        raise InvalidRequest(
            _expected(path, "a string or an array of parts", content), param=path
        )
    for position, part in enumerate(content):
        part_path = f"{path}[{position}]"
        if not isinstance(part, dict):
            raise InvalidRequest(
                _expected(part_path, "an object", part), param=part_path
            )
        kind = part.get("type")
        if not isinstance(kind, str):
            raise InvalidRequest(
                _expected(f"{part_path}.type", "a string", kind),
                param=f"{part_path}.type",
            )
        if kind not in PART_MEMBERS:
            raise InvalidRequest(
                f"'{part_path}.type' must be one of {', '.join(PART_MEMBERS)}; "
                f"got {dumps_compact(kind)}",
                param=f"{part_path}.type",
            )
        member, member_type = PART_MEMBERS[kind]
        if not isinstance(part.get(member), member_type):
            what = "a string" if member_type is str else "an object"
            raise InvalidRequest(
                _expected(f"{part_path}.{member}", what, part.get(member)),
                param=f"{part_path}.{member}",
            )


def _check_message(message: JsonValue, path: str) -> None:
    if not isinstance(message, dict):
        raise InvalidRequest(_expected(path, "an object", message), param=path)
    role = message.get("role")
    if role not in ROLES:
        shown = dumps_compact(role) if role is not None else "missing"
        raise InvalidRequest(
            f"'{path}.role' must be one of {', '.join(ROLES)}; got {shown}",
            param=f"{path}.role",
        )
    content = message.get("content")
    if role == "assistant":
        _check_content(content, f"{path}.content", allow_null=True)
        reasoning = message.get("reasoning_content")
        if reasoning is not None and not isinstance(reasoning, str):
            raise InvalidRequest(
                _expected(f"{path}.reasoning_content", "a string", reasoning),
                param=f"{path}.reasoning_content",
            )
        calls = message.get("tool_calls")
        if calls is not None:
            _check_tool_calls(calls, f"{path}.tool_calls")
        if content is None and not calls:
            raise InvalidRequest(
                f"'{path}.content' is required unless 'tool_calls' is given",
                param=f"{path}.content",
            )
        return
    _check_content(content, f"{path}.content", allow_null=False)
    if role == "tool":
        call_id = message.get("tool_call_id")
        if not isinstance(call_id, str):
            raise InvalidRequest(
                _expected(f"{path}.tool_call_id", "a string", call_id),
                param=f"{path}.tool_call_id",
            )


def _check_tool_calls(calls: JsonValue, path: str) -> None:
    if not isinstance(calls, list):
        raise InvalidRequest(_expected(path, "an array", calls), param=path)
    for position, call in enumerate(calls):
        call_path = f"{path}[{position}]"
        if not isinstance(call, dict):
            raise InvalidRequest(
                _expected(call_path, "an object", call), param=call_path
            )
        for key in ("id",):
            if not isinstance(call.get(key), str):
                raise InvalidRequest(
                    _expected(f"{call_path}.{key}", "a string", call.get(key)),
                    param=f"{call_path}.{key}",
                )
        if call.get("type", "function") != "function":
            raise InvalidRequest(
                f"'{call_path}.type' must be 'function'", param=f"{call_path}.type"
            )
        function = call.get("function")
        if not isinstance(function, dict):
            raise InvalidRequest(
                _expected(f"{call_path}.function", "an object", function),
                param=f"{call_path}.function",
            )
        for key in ("name", "arguments"):
            if not isinstance(function.get(key), str):
                raise InvalidRequest(
                    _expected(
                        f"{call_path}.function.{key}", "a string", function.get(key)
                    ),
                    param=f"{call_path}.function.{key}",
                )


def _check_tool(tool: JsonValue, path: str) -> None:
    if not isinstance(tool, dict):
        raise InvalidRequest(_expected(path, "an object", tool), param=path)
    if tool.get("type") != "function":
        raise InvalidRequest(f"'{path}.type' must be 'function'", param=f"{path}.type")
    function = tool.get("function")
    if not isinstance(function, dict):
        raise InvalidRequest(
            _expected(f"{path}.function", "an object", function),
            param=f"{path}.function",
        )
    name = function.get("name")
    if not isinstance(name, str) or not name:
        raise InvalidRequest(
            _expected(f"{path}.function.name", "a non-empty string", name),
            param=f"{path}.function.name",
        )
    description = function.get("description")
    if description is not None and not isinstance(description, str):
        raise InvalidRequest(
            _expected(f"{path}.function.description", "a string", description),
            param=f"{path}.function.description",
        )
    parameters = function.get("parameters")
    if parameters is not None and not isinstance(parameters, dict):
        raise InvalidRequest(
            _expected(f"{path}.function.parameters", "an object", parameters),
            param=f"{path}.function.parameters",
        )


# --- prompt -----------------------------------------------------------------


def chat_segments(call: ChatCall, order: Sequence[RenderSection]) -> list[Segment]:
    """The request's prompt segments in the profile's render order."""
    sections: dict[RenderSection, list[Segment]] = {
        "tools": chat_tool_segments(call),
        "system": [],
        "messages": [],
    }
    leading = True
    for position, message in enumerate(call.messages):
        assert isinstance(message, dict)  # checked by parse_chat_request
        leading = leading and message.get("role") in SYSTEM_ROLES
        sections["system" if leading else "messages"].append(
            chat_message_segment(position, message)
        )
    return [segment for section in order for segment in sections[section]]


def chat_tool_segments(call: ChatCall) -> list[Segment]:
    """The tools section: one segment per tool, then `response_format`."""
    segments = [
        Segment(
            path=f"tools[{position}]", message_index=None, value=tool, label="tool:"
        )
        for position, tool in enumerate(call.tools)
    ]
    response_format = call.body.get("response_format")
    if response_format is not None:
        segments.append(
            Segment(
                path="response_format",
                message_index=None,
                value=response_format,
                label="format:",
            )
        )
    return segments


def chat_message_segment(position: int, message: JsonValue) -> Segment:
    """The segment of `messages[position]` (system or not, it renders alike)."""
    return Segment(path=f"messages[{position}]", message_index=position, value=message)


# --- usage and bodies -----------------------------------------------------


def chat_usage(
    flavour: ChatFlavour, *, prompt: int, cached: int, completion: int, reasoning: int
) -> ChatUsage:
    """The usage object, with the fields and order the flavour reports."""
    if flavour.hit_miss_usage:
        usage = ChatUsage(
            completion_tokens=completion,
            prompt_tokens=prompt,
            prompt_cache_hit_tokens=cached,
            prompt_cache_miss_tokens=prompt - cached,
            total_tokens=prompt + completion,
            prompt_tokens_details={"cached_tokens": cached},
        )
        if reasoning:
            usage["completion_tokens_details"] = {"reasoning_tokens": reasoning}
        return usage
    return ChatUsage(
        prompt_tokens=prompt,
        completion_tokens=completion,
        total_tokens=prompt + completion,
        prompt_tokens_details={"cached_tokens": cached, "audio_tokens": 0},
        completion_tokens_details={
            "reasoning_tokens": reasoning,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    )


def chat_call_ids(
    flavour: ChatFlavour, profile: Profile, index: int, reply: Reply
) -> tuple[str, ...]:
    """Tool-call ids: scripted ones, else deterministic provider-shaped ones."""
    ids: list[str] = []
    for position, call in enumerate(reply.tool_calls):
        if call.id is not None:
            ids.append(call.id)
        elif flavour.uuid_ids:
            ids.append(
                f"call_{position}_{derive_uuid(profile.seed, index, f'call{position}')}"
            )
        else:
            ids.append("call_" + derive_hex(profile.seed, index, f"call{position}"))
    return tuple(ids)


def completion_id(flavour: ChatFlavour, profile: Profile, index: int) -> str:
    """The completion id: a UUID for DeepSeek, `chatcmpl-...` for OpenAI."""
    if flavour.uuid_ids:
        return derive_uuid(profile.seed, index, "completion")
    return "chatcmpl-" + derive_hex(profile.seed, index, "completion", 29)


def fingerprint(profile: Profile) -> str:
    """A stable `system_fingerprint`."""
    return "fp_" + derive_hex(profile.seed, 0, "fingerprint", 10)


def _content(answer: ChatAnswer) -> str | None:
    reply = answer.reply
    if reply.text is not None:
        return reply.text
    if reply.tool_calls:
        return "" if answer.flavour.empty_content else None
    return ""


def emitted_message(answer: ChatAnswer) -> JsonObject:
    """The assistant message a faithful harness sends back next turn.

    `content` (text, `""` or `null`), `reasoning_content` only for the
    DeepSeek dialect when the reply made tool calls with non-empty
    reasoning (DeepSeek requires it back then; OpenAI never sends it), and
    `tool_calls` with the exact ids and argument strings.
    """
    reply = answer.reply
    message: JsonObject = {"role": "assistant", "content": _content(answer)}
    if answer.flavour.reasoning_content and reply.tool_calls and reply.reasoning:
        message["reasoning_content"] = reply.reasoning
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for call, call_id in zip(reply.tool_calls, answer.call_ids, strict=True)
        ]
    return message


def chat_completion(answer: ChatAnswer) -> JsonObject:
    """The non-streaming `chat.completion` body."""
    reply = answer.reply
    message: JsonObject = {"role": "assistant", "content": _content(answer)}
    if reply.reasoning is not None and answer.flavour.reasoning_content:
        message["reasoning_content"] = reply.reasoning
    if reply.tool_calls:
        message["tool_calls"] = emitted_message(answer)["tool_calls"]
    body: JsonObject = {
        "id": completion_id(answer.flavour, answer.profile, answer.index),
        "object": "chat.completion",
        "created": answer.created,
        "model": answer.model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": reply.effective_finish_reason,
            }
        ],
        "usage": json_object(answer.usage),
        "system_fingerprint": fingerprint(answer.profile),
    }
    return body


def _frame(payload: JsonValue) -> bytes:
    return b"data: " + dumps_compact(payload).encode("utf-8") + b"\n\n"


DONE_FRAME = b"data: [DONE]\n\n"
KEEPALIVE_FRAME = b": keep-alive\n\n"


def chat_stream_payloads(answer: ChatAnswer, include_usage: bool) -> list[JsonObject]:
    """The chunk objects of a streamed answer, in order (without `[DONE]`)."""
    profile, reply = answer.profile, answer.reply
    flavour = answer.flavour
    on_finish = profile.stream_usage == "finish_chunk"
    usage_chunk = not on_finish and include_usage
    head: JsonObject = {
        "id": completion_id(flavour, profile, answer.index),
        "object": "chat.completion.chunk",
        "created": answer.created,
        "model": answer.model,
        "system_fingerprint": fingerprint(profile),
    }

    def chunk(delta: JsonObject, finish: str | None = None) -> JsonObject:
        payload: JsonObject = {
            **head,
            "choices": [
                {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
            ],
        }
        if usage_chunk:
            payload["usage"] = None
        return payload

    size = profile.chunk_chars
    chunks: list[JsonObject] = []
    if reply.reasoning is not None and flavour.reasoning_content:
        chunks.append(
            chunk({"role": "assistant", "content": None, "reasoning_content": ""})
        )
        chunks.extend(
            chunk({"content": None, "reasoning_content": piece})
            for piece in split_text(reply.reasoning, size)
        )
    else:
        chunks.append(chunk({"role": "assistant", "content": ""}))
    if reply.text:
        chunks.extend(
            chunk({"content": piece}) for piece in split_text(reply.text, size)
        )
    for position, (call, call_id) in enumerate(
        zip(reply.tool_calls, answer.call_ids, strict=True)
    ):
        chunks.append(
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": position,
                            "id": call_id,
                            "type": "function",
                            "function": {"name": call.name, "arguments": ""},
                        }
                    ]
                }
            )
        )
        chunks.extend(
            chunk(
                {"tool_calls": [{"index": position, "function": {"arguments": piece}}]}
            )
            for piece in split_text(call.arguments, size)
        )
    final = chunk(
        {"content": ""} if flavour.empty_content else {}, reply.effective_finish_reason
    )
    if on_finish:
        final["usage"] = json_object(answer.usage)
    chunks.append(final)
    if usage_chunk:
        chunks.append({**head, "choices": [], "usage": json_object(answer.usage)})
    return chunks


def chat_stream_frames(answer: ChatAnswer, include_usage: bool) -> list[bytes]:
    """The SSE frames of a streamed answer, ending with `data: [DONE]`."""
    frames = [
        _frame(payload) for payload in chat_stream_payloads(answer, include_usage)
    ]
    frames.append(DONE_FRAME)
    return frames


def chat_error_body(
    message: str,
    *,
    error_type: str = "invalid_request_error",
    param: str | None = None,
    code: str | None = None,
) -> ChatErrorBody:
    """The `{"error": {message, type, param, code}}` envelope."""
    return ChatErrorBody(
        error={"message": message, "type": error_type, "param": param, "code": code}
    )


CHAT_FAULT_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "insufficient_balance",
    403: "permission_denied",
    404: "not_found",
    413: "invalid_request_error",
    422: "invalid_request_error",
    429: "rate_limit_error",
    503: "service_unavailable",
    529: "overloaded_error",
}
CHAT_FAULT_MESSAGES = {
    429: "Rate limit reached for requests. "
    "Please retry after the time in 'retry-after'.",
    500: "The server had an error while processing your request.",
    503: "The server is overloaded or not ready yet.",
    529: "The server is overloaded.",
}


def chat_fault_body(
    status: int, message: str | None, error_type: str | None
) -> ChatErrorBody:
    """The error body a scripted fault sends on the chat endpoints."""
    kind = error_type or CHAT_FAULT_TYPES.get(
        status, "server_error" if status >= 500 else "invalid_request_error"
    )
    text = message or CHAT_FAULT_MESSAGES.get(
        status, f"Scripted error (HTTP {status})."
    )
    return chat_error_body(text, error_type=kind, code=kind if status == 429 else None)


def request_texts(body: JsonObject) -> RequestTexts:
    """What routes match a chat-completions request by: its system and
    developer messages, its last user message, its tools."""
    messages = body.get("messages")
    return RequestTexts(
        system=joined(role_texts(messages, ("system", "developer"))),
        last_user=last_user_text(messages),
        tools=tool_names(body),
    )

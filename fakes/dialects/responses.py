"""OpenAI Responses API requests: validation, conversation state and segments.

Endpoint: `POST /v1/responses` (also `/responses`, for clients whose base
URL already ends in `/v1`). The answers (bodies, events, usage) are in
`reqfold.fakes.dialects.responses_output`.

Requests (`parse_responses_request`) are validated like the real API
does, a violation being a 400 `invalid_request_error` naming the field
(`input[3].call_id`). `input` is a string (documented as equivalent to
one user message with that text) or a list of items: messages (`role`
user, assistant, system or developer; `content` a string or a list of
parts), `function_call` / `function_call_output`, `reasoning` and the
other item types the API lists; an unknown item type is refused.

Conversation state: with `previous_response_id` the API prepends the
named response's input and output items (not its `instructions`) to the
new input; a response is kept for that only when `store` is not false,
and naming one that is not kept is the API's 400
(`previous_response_not_found`). An `item_reference` stands for the
stored item of that id. `expand_conversation` does both against the
provider's `ConversationStore`.

Prompt segments, in the profile's render order (tools, system, messages):
one per tool; a `params` segment with what the API's own cache
diagnostics name as prompt-affecting settings (`text.format`,
`text.verbosity`, `reasoning.effort`), then `instructions`; one per item
of the expanded input. Each item renders without what the model never
sees (`id` of messages and calls, `status`, members sent as null), in one
member order, and in one shape: a string
`content` renders as one text part (`input_text`, or `output_text` for
an assistant), and a message without `"type"` as one with
`"type": "message"` (docs/fake-provider.md, "Content shape").
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, replace

import msgspec

from reqfold.fakes.dialects.common import request_object
from reqfold.fakes.errors import InvalidRequest
from reqfold.fakes.jsontypes import JsonObject, JsonValue, dumps_compact, type_name
from reqfold.fakes.profiles import RenderSection
from reqfold.fakes.prompt import Segment
from reqfold.fakes.routes import (
    RequestTexts,
    content_text,
    joined,
    last_user_text,
    role_texts,
    tool_names,
)

RESPONSES_PATHS = ("/v1/responses", "/responses")
WIRE = "Responses API"
"""The wire format's name (the dialect's own name is in the registry)."""
ROLES = ("user", "assistant", "system", "developer")
ITEM_TYPES = (
    "message",
    "function_call",
    "function_call_output",
    "reasoning",
    "item_reference",
    "custom_tool_call",
    "custom_tool_call_output",
    "compaction",
    "compaction_trigger",
    "file_search_call",
    "web_search_call",
    "computer_call",
    "computer_call_output",
    "code_interpreter_call",
    "image_generation_call",
    "local_shell_call",
    "local_shell_call_output",
    "shell_call",
    "shell_call_output",
    "apply_patch_call",
    "apply_patch_call_output",
    "tool_search_call",
    "tool_search_output",
    "additional_tools",
    "mcp_list_tools",
    "mcp_approval_request",
    "mcp_approval_response",
    "mcp_call",
    "program",
    "program_output",
)
"""Input item types the API accepts (the OpenAI SDK's `ResponseInputItemParam`)."""
TEXT_PARTS = ("input_text", "output_text", "refusal")
PART_TYPES = (*TEXT_PARTS, "input_image", "input_file", "input_audio")
REQUIRED_STRINGS: dict[str, tuple[str, ...]] = {
    "function_call": ("call_id", "name", "arguments"),
    "function_call_output": ("call_id",),
    "custom_tool_call": ("call_id", "name", "input"),
    "custom_tool_call_output": ("call_id",),
    "item_reference": ("id",),
}
HIDDEN_MEMBERS = ("id", "status")
"""Item members the model never sees (reasoning keeps its `id`: it names the
stored reasoning when no `encrypted_content` is sent)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ResponsesCall:
    """A validated Responses request; `body` is the parsed JSON.

    `items` is the input as a list of items; once expanded
    (`expand_conversation`) it starts with the items of the chain of
    `previous_response_id`, and `prior` says how many of them there are.
    """

    body: JsonObject
    model: str
    items: tuple[JsonValue, ...]
    tools: list[JsonValue]
    stream: bool
    store: bool
    previous_response_id: str | None
    prior: int = 0


def _expected(path: str, what: str, got: JsonValue) -> str:
    if got is None:
        return f"Missing required parameter: '{path}' ({what})."
    return f"Invalid type for '{path}': expected {what}, but got {type_name(got)}."


def _check_type(
    container: JsonObject, key: str, kind: type, what: str, path: str
) -> None:
    value = container.get(key)
    if value is None:
        return
    if (isinstance(value, bool) and kind is not bool) or not isinstance(value, kind):
        raise InvalidRequest(_expected(path, what, value), param=path)


def parse_responses_request(value: JsonValue) -> ResponsesCall:
    """Validate a parsed Responses body.

    Raises:
        InvalidRequest: the body violates the API's request schema.
    """
    value = request_object(value)
    model = value.get("model")
    if not isinstance(model, str) or not model:
        raise InvalidRequest(_expected("model", "a string", model), param="model")
    raw_input = value.get("input")
    items: list[JsonValue]
    if isinstance(raw_input, str):
        items = [{"role": "user", "content": raw_input}]
    elif isinstance(raw_input, list):
        items = raw_input
        for position, item in enumerate(items):
            _check_item(item, f"input[{position}]")
    elif raw_input is None and isinstance(value.get("previous_response_id"), str):
        items = []
    else:
        raise InvalidRequest(
            _expected("input", "a string or an array of items", raw_input),
            param="input",
        )
    tools = value.get("tools")
    if tools is not None:
        if not isinstance(tools, list):
            raise InvalidRequest(_expected("tools", "an array", tools), param="tools")
        for position, tool in enumerate(tools):
            _check_tool(tool, f"tools[{position}]")
    for key in ("stream", "store", "parallel_tool_calls", "background"):
        _check_type(value, key, bool, "a boolean", key)
    for key in ("instructions", "previous_response_id", "prompt_cache_key", "user"):
        _check_type(value, key, str, "a string", key)
    for key in ("reasoning", "text", "prompt_cache_options", "metadata"):
        _check_type(value, key, dict, "an object", key)
    _check_type(value, "include", list, "an array", "include")
    _check_type(value, "max_output_tokens", int, "an integer", "max_output_tokens")
    for name in ("temperature", "top_p"):
        number = value.get(name)
        if number is not None and (
            isinstance(number, bool)
            or not isinstance(number, int | float)
            or not math.isfinite(number)
        ):
            raise InvalidRequest(_expected(name, "a number", number), param=name)
    options = value.get("prompt_cache_options")
    if isinstance(options, dict):
        _check_type(
            options,
            "comparison_response_id",
            str,
            "a string",
            "prompt_cache_options.comparison_response_id",
        )
    previous = value.get("previous_response_id")
    return ResponsesCall(
        body=value,
        model=model,
        items=tuple(items),
        tools=tools if isinstance(tools, list) else [],
        stream=value.get("stream") is True,
        store=value.get("store") is not False,
        previous_response_id=previous if isinstance(previous, str) else None,
    )


def _check_tool(tool: JsonValue, path: str) -> None:
    if not isinstance(tool, dict):
        raise InvalidRequest(_expected(path, "an object", tool), param=path)
    kind = tool.get("type")
    if not isinstance(kind, str):
        raise InvalidRequest(
            _expected(f"{path}.type", "a string", kind), param=f"{path}.type"
        )
    if kind in ("function", "custom") and not isinstance(tool.get("name"), str):
        raise InvalidRequest(
            _expected(f"{path}.name", "a string", tool.get("name")),
            param=f"{path}.name",
        )


def _check_item(item: JsonValue, path: str) -> None:
    if not isinstance(item, dict):
        raise InvalidRequest(_expected(path, "an object", item), param=path)
    kind = item.get("type", "message" if "role" in item else None)
    if not isinstance(kind, str):
        raise InvalidRequest(
            _expected(f"{path}.type", "a string", kind), param=f"{path}.type"
        )
    if kind not in ITEM_TYPES:
        raise InvalidRequest(
            f"Invalid value: {dumps_compact(kind)}. Supported values are: "
            + ", ".join(f"'{name}'" for name in ITEM_TYPES)
            + ".",
            param=f"{path}.type",
            code="invalid_value",
        )
    if kind == "message":
        _check_message(item, path)
    elif kind == "reasoning":
        _check_type(item, "summary", list, "an array", f"{path}.summary")
        if not isinstance(item.get("summary"), list):
            raise InvalidRequest(
                _expected(f"{path}.summary", "an array", None), param=f"{path}.summary"
            )
        _check_type(
            item, "encrypted_content", str, "a string", f"{path}.encrypted_content"
        )
    for key in REQUIRED_STRINGS.get(kind, ()):
        if not isinstance(item.get(key), str):
            raise InvalidRequest(
                _expected(f"{path}.{key}", "a string", item.get(key)),
                param=f"{path}.{key}",
            )
    if kind in ("function_call_output", "custom_tool_call_output"):
        output = item.get("output")
        if not isinstance(output, str | list):
            raise InvalidRequest(
                _expected(f"{path}.output", "a string or an array", output),
                param=f"{path}.output",
            )


def _check_message(item: JsonObject, path: str) -> None:
    role = item.get("role")
    if role not in ROLES:
        raise InvalidRequest(
            f"Invalid value for '{path}.role': expected one of "
            f"{', '.join(ROLES)}, got {dumps_compact(role)}.",
            param=f"{path}.role",
        )
    content = item.get("content")
    if isinstance(content, str):
        return
    if not isinstance(content, list):
        raise InvalidRequest(
            _expected(f"{path}.content", "a string or an array of parts", content),
            param=f"{path}.content",
        )
    for position, part in enumerate(content):
        part_path = f"{path}.content[{position}]"
        if not isinstance(part, dict):
            raise InvalidRequest(
                _expected(part_path, "an object", part), param=part_path
            )
        kind = part.get("type")
        if kind not in PART_TYPES:
            raise InvalidRequest(
                f"Invalid value: {dumps_compact(kind)}. Supported values are: "
                + ", ".join(f"'{name}'" for name in PART_TYPES)
                + ".",
                param=f"{part_path}.type",
                code="invalid_value",
            )
        member = "refusal" if kind == "refusal" else "text"
        if kind in TEXT_PARTS and not isinstance(part.get(member), str):
            raise InvalidRequest(
                _expected(f"{part_path}.{member}", "a string", part.get(member)),
                param=f"{part_path}.{member}",
            )


# --- conversation state -------------------------------------------------------


class ConversationStore:
    """Stored responses by id: the items a `previous_response_id` continues,
    and each stored item by its own id, for an `item_reference`.

    Thread-safe; bounded to the `limit` most recently stored responses and
    `16 * limit` items (an older id is then "not found", as an expired one
    is on the API).
    """

    def __init__(self, limit: int = 4096) -> None:
        self.limit = limit
        self._items: OrderedDict[str, tuple[JsonValue, ...]] = OrderedDict()
        self._by_id: OrderedDict[str, JsonValue] = OrderedDict()
        self._lock = threading.Lock()

    def item(self, item_id: str) -> JsonValue:
        """The stored item whose `id` is `item_id`, or None."""
        with self._lock:
            return self._by_id.get(item_id)

    def get(self, response_id: str) -> tuple[JsonValue, ...] | None:
        """The items of stored response `response_id` (input then output)."""
        with self._lock:
            return self._items.get(response_id)

    def put(self, response_id: str, items: tuple[JsonValue, ...]) -> None:
        """Keep a response's items under its id."""
        with self._lock:
            self._items[response_id] = items
            self._items.move_to_end(response_id)
            while len(self._items) > self.limit:
                self._items.popitem(last=False)
            for item in items:
                if isinstance(item, dict) and isinstance(item.get("id"), str):
                    item_id = item["id"]
                    assert isinstance(item_id, str)
                    self._by_id[item_id] = item
                    self._by_id.move_to_end(item_id)
            while len(self._by_id) > 16 * self.limit:
                self._by_id.popitem(last=False)

    def clear(self) -> None:
        """Forget every stored response."""
        with self._lock:
            self._items.clear()
            self._by_id.clear()


def expand_conversation(call: ResponsesCall, store: ConversationStore) -> ResponsesCall:
    """`call` with the items of its `previous_response_id` before its input,
    and each `item_reference` in its input replaced by the item it names.

    Raises:
        InvalidRequest: the named response or item is not stored (never
            was, was sent with `store: false`, or was forgotten).
    """
    if any(_is_reference(item) for item in call.items):
        call = replace(call, items=_resolved(call, store))
    if call.previous_response_id is None:
        return call
    prior = store.get(call.previous_response_id)
    if prior is None:
        raise InvalidRequest(
            f"Previous response with id '{call.previous_response_id}' not found.",
            param="previous_response_id",
            code="previous_response_not_found",
        )
    return replace(call, items=prior + call.items, prior=len(prior))


def _is_reference(item: JsonValue) -> bool:
    return isinstance(item, dict) and item.get("type") == "item_reference"


def _resolved(call: ResponsesCall, store: ConversationStore) -> tuple[JsonValue, ...]:
    items: list[JsonValue] = []
    for position, item in enumerate(call.items):
        if not _is_reference(item):
            items.append(item)
            continue
        assert isinstance(item, dict)
        item_id = item.get("id")
        found = store.item(item_id) if isinstance(item_id, str) else None
        if found is None:
            raise InvalidRequest(
                f"Item with id '{item_id}' not found.",
                param=f"input[{position}].id",
            )
        items.append(found)
    return tuple(items)


# --- prompt -------------------------------------------------------------------


ITEM_ORDER: dict[str, tuple[str, ...]] = {
    "message": ("type", "role", "content"),
    "function_call": ("type", "call_id", "name", "arguments"),
    "function_call_output": ("type", "call_id", "output"),
    "custom_tool_call": ("type", "call_id", "name", "input"),
    "custom_tool_call_output": ("type", "call_id", "output"),
}
"""The members of the common items in one order: the API reads items into
typed fields, so the order a client writes them in is not the prompt's."""


def normal_item(item: JsonValue) -> JsonValue:
    """An input or output item as the model sees it (one shape per meaning)."""
    if not isinstance(item, dict):
        return item
    kind = item.get("type", "message" if "role" in item else None)
    if kind == "reasoning":
        return {
            key: value
            for key, value in item.items()
            if key != "status" and value is not None
        }
    shown: JsonObject = {}
    if kind == "message":
        shown["type"] = "message"
    order = ITEM_ORDER.get(kind, ()) if isinstance(kind, str) else ()
    for key in (*order, *(key for key in item if key not in order)):
        if key in HIDDEN_MEMBERS or item.get(key) is None:
            continue  # a typed field sent as null is the field left out
        value = item[key]
        if kind == "message" and key == "content":
            value = _normal_content(value, item.get("role"))
        shown[key] = value
    return shown


_ITEM_ENCODER = msgspec.json.Encoder()
_NORMAL_ITEMS: dict[bytes, JsonValue] = {}
NORMAL_MEMO_SIZE = 16384


def remembered_normal_item(item: JsonValue) -> JsonValue:
    """`normal_item(item)`, remembered by the item's encoding: a harness
    resends every item every turn. The values returned are shared: never
    change them."""
    try:
        key = _ITEM_ENCODER.encode(item)
    except (msgspec.EncodeError, TypeError, ValueError, OverflowError):
        return normal_item(item)
    shown = _NORMAL_ITEMS.get(key)
    if shown is None:
        shown = normal_item(item)
        if len(_NORMAL_ITEMS) >= NORMAL_MEMO_SIZE:
            _NORMAL_ITEMS.clear()
        _NORMAL_ITEMS[key] = shown
    return shown


def _normal_content(content: JsonValue, role: JsonValue) -> JsonValue:
    kind = "output_text" if role == "assistant" else "input_text"
    if isinstance(content, str):
        return [{"type": kind, "text": content}]
    if not isinstance(content, list):
        return content
    parts: list[JsonValue] = []
    for part in content:
        # Annotations and logprobs of an echoed output_text are metadata
        # of the answer, not text the model reads back.
        if isinstance(part, dict) and part.get("type") == "output_text":
            part = {"type": "output_text", "text": part.get("text")}
        parts.append(part)
    return parts


def cache_params(body: JsonObject) -> JsonObject:
    """The settings the API's diagnostics name as breaking the cache."""
    params: JsonObject = {}
    text = body.get("text")
    if isinstance(text, dict):
        for key in ("format", "verbosity"):
            if key in text:
                params[key] = text[key]
    reasoning = body.get("reasoning")
    if isinstance(reasoning, dict) and "effort" in reasoning:
        params["effort"] = reasoning["effort"]
    return params


def responses_segments(
    call: ResponsesCall, order: Sequence[RenderSection]
) -> list[Segment]:
    """The request's prompt segments (tools, settings, instructions, items)."""
    sections: dict[RenderSection, list[Segment]] = {
        "tools": [
            Segment(
                path=f"tools[{position}]", message_index=None, value=tool, label="tool:"
            )
            for position, tool in enumerate(call.tools)
        ],
        "system": [],
        "messages": [],
    }
    params = cache_params(call.body)
    if params:
        sections["system"].append(
            Segment(path="params", message_index=None, value=params, label="params:")
        )
    instructions = call.body.get("instructions")
    if isinstance(instructions, str) and instructions:
        sections["system"].append(
            Segment(
                path="instructions",
                message_index=None,
                value=instructions,
                label="instructions:",
                verbatim=True,
            )
        )
    for position, item in enumerate(call.items):
        sections["messages"].append(
            Segment(
                path=_item_path(call, position),
                message_index=position,
                value=remembered_normal_item(item),
            )
        )
    return [segment for section in order for segment in sections[section]]


def _item_path(call: ResponsesCall, position: int) -> str:
    if position < call.prior:
        return f"previous_response[{position}]"
    if isinstance(call.body.get("input"), str):
        return "input"
    return f"input[{position - call.prior}]"


def request_texts(body: JsonObject) -> RequestTexts:
    """What routes match a Responses request by: ``instructions`` and the
    system and developer items of ``input`` (Codex sends no
    ``instructions``), its last user item (``input`` as a string is one),
    its tools."""
    items = body.get("input")
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    return RequestTexts(
        system=joined(
            [
                content_text(body.get("instructions")),
                *role_texts(items, ("system", "developer")),
            ]
        ),
        last_user=last_user_text(items),
        tools=tool_names(body),
    )

"""Echo fidelity: the assistant turn re-sent as the provider returned it.

The fake records, with each request, the assistant message a faithful
harness sends back (`reply` in the capture: content, tool-call ids and
argument bytes, DeepSeek's `reasoning_content`, Anthropic's content blocks
with thinking and its signature). When the next request of the stream
appends that turn, its members must be the ones returned, byte for byte;
`content: null` and `""` are the same empty turn, and an Anthropic string
is the documented shorthand for one text block.
"""

from __future__ import annotations

import enum
from typing import Final

from reqfold.conformance.cache.prompts import Prompt
from reqfold.fakes.diagnostics import (
    ECHOED_ITEMS,
    describe_divergence,
    emitted_fields,
    items_echo_divergence,
)
from reqfold.fakes.jsontypes import JsonObject, JsonValue
from reqfold.fakes.prompt import Segment


class _NotApplicable(enum.Enum):
    NOT_APPLICABLE = "not applicable"


NOT_APPLICABLE: Final = _NotApplicable.NOT_APPLICABLE
"""The request re-sends no reply to check: none was recorded, or nothing
follows the previous request's messages."""

EchoResult = tuple[str, str, str] | _NotApplicable | None
"""(field, returned, echoed) where the re-sent turn first differs; None when
it matches; `NOT_APPLICABLE` when there is nothing to check."""


def echo_difference(previous: Prompt, current: Prompt) -> EchoResult:
    """Where the turn at the reply's position first differs from the reply.

    Whatever message sits right after the previous request's messages is the
    re-sent reply: another role there (the reply sent back as a user turn, or
    left out) is a difference at `.role`.
    """
    reply = previous.reply
    if not isinstance(reply, dict) or current.message_count <= previous.message_count:
        return NOT_APPLICABLE
    position = previous.message_count
    items = reply.get(ECHOED_ITEMS)
    if isinstance(items, list):  # the Responses API: the answer's items
        return _items_difference(items, current, position)
    message = _message_at(current, position)
    if message is None:
        return NOT_APPLICABLE
    path = f"messages[{position}]"
    role = message.get("role")
    if role != "assistant":
        return f"{path}.role", "assistant", role if isinstance(role, str) else ""
    names = emitted_fields(reply)
    returned = _normal({name: reply[name] for name in names})
    echoed = _normal({name: message.get(name) for name in names})
    if returned == echoed:
        return None
    evidence = describe_divergence(
        Segment(path=path, message_index=position, value=returned),
        Segment(path=path, message_index=position, value=echoed),
        0,
    )
    return evidence["field"], evidence["earlier"], evidence["current"]


def _items_difference(
    items: list[JsonValue], current: Prompt, position: int
) -> EchoResult:
    """Where the appended answer items first differ from the returned ones."""
    first = next(
        (
            at
            for at, segment in enumerate(current.segments)
            if segment.message_index == position
        ),
        None,
    )
    if first is None:
        return NOT_APPLICABLE
    found = items_echo_divergence(items, current.segments, current.ends, first)
    if found is None:
        return None
    return found["field"], found["earlier"], found["current"]


def _message_at(prompt: Prompt, position: int) -> JsonObject | None:
    """Message `position` of the request, rebuilt from its segments."""
    blocks: list[JsonValue] = []
    role: str | None = None
    for segment in prompt.segments:
        if segment.message_index != position:
            continue
        value = segment.value
        if isinstance(value, dict) and "role" in value:
            return value  # chat completions: one segment per message
        role = segment.label.rstrip(":")
        if segment.verbatim:
            return {"role": role, "content": value}
        blocks.append(value)
    if role is None:
        return None
    return {"role": role, "content": blocks}


def _normal(message: JsonObject) -> JsonObject:
    content = message.get("content")
    if content in (None, ""):
        return {**message, "content": ""}
    if (
        isinstance(content, list)
        and len(content) == 1
        and isinstance(content[0], dict)
        and content[0].get("type") == "text"
        and set(content[0]) == {"type", "text"}
    ):
        return {**message, "content": content[0]["text"]}
    return message

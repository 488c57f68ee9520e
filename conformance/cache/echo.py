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

from reqfold.conformance.cache.prompts import Prompt
from reqfold.fakes.diagnostics import describe_divergence, emitted_fields
from reqfold.fakes.jsontypes import JsonObject, JsonValue
from reqfold.fakes.prompt import Segment


def echo_difference(previous: Prompt, current: Prompt) -> tuple[str, str, str] | None:
    """(field, returned, echoed) where the re-sent turn first differs, or None.

    None too when the request does not append an assistant turn right after
    the previous request's messages.
    """
    reply = previous.reply
    if not isinstance(reply, dict):
        return None
    position = previous.message_count
    message = _message_at(current, position)
    if message is None or message.get("role") != "assistant":
        return None
    names = emitted_fields(reply)
    returned = _normal({name: reply[name] for name in names})
    echoed = _normal({name: message.get(name) for name in names})
    if returned == echoed:
        return None
    path = f"messages[{position}]"
    evidence = describe_divergence(
        Segment(path=path, message_index=position, value=returned),
        Segment(path=path, message_index=position, value=echoed),
        0,
    )
    return evidence["field"], evidence["earlier"], evidence["current"]


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

"""Building a request from the log: its messages and its chat-completions body.

Implements docs/spec.md sections "Derived history and request construction"
(REQ-3, REQ-4, REQ-5) and "Wire mapping" (WIRE-1 .. WIRE-5) for the
OpenAI/DeepSeek chat completions dialect. Pure: a header and messages in, a
JSON body out. The same functions serve the reference harness (to send) and
the suite (to rebuild what should have been sent).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reqfold.reference.header import Header
from reqfold.reference.json_values import JsonObject
from reqfold.reference.revisions import LATEST, Revision

CONTRACT_KEYS = ("model", "messages", "tools", "temperature", "max_tokens", "stop")
"""Body members the contract determines; others (``stream``, ``thinking``...)
are deployment settings that the log does not record."""

RESERVED_SETTINGS = (*CONTRACT_KEYS, "stream", "stream_options")
"""Body members deployment settings may not set: the contract's (the log
determines them, REQ-6) and the stream members (the client's ``stream``)."""

NO_OUTPUT = "(no output)"


def check_settings(settings: Mapping[str, Any] | None) -> None:
    """Raise `ValueError` when deployment settings name a reserved member.

    Settings are placed in the body after the stream members, so a setting
    named ``model`` or ``temperature`` would silently override what the log
    records (WIRE-1, WIRE-4, REQ-6); one named ``stream`` would contradict
    how the client reads the answer.
    """
    clashes = [key for key in settings or {} if key in RESERVED_SETTINGS]
    if clashes:
        raise ValueError(
            f"deployment settings may not set {', '.join(map(repr, clashes))}:"
            " the log determines the contract members"
            f" ({', '.join(CONTRACT_KEYS)}) and the client sets stream and"
            " stream_options"
        )


def request_messages(
    header: Header, derived: list[JsonObject], revision: Revision = LATEST
) -> list[JsonObject]:
    """The messages a request carries: framing around the derived history.

    Implements: REQ-3, REQ-4, REQ-5.
    """
    prefix = header.get("messagePrefix", []) if revision.message_fields else []
    suffix = (
        header.get("messageSuffix", []) if revision is Revision.REQUEST_MESSAGES else []
    )
    return [*prefix, *derived, *suffix]


def _joined_text(blocks: list[Any]) -> str:
    return "".join(
        block["text"]
        for block in blocks
        if isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    )


def _blocks_of(blocks: list[Any], kind: str) -> list[JsonObject]:
    return [b for b in blocks if isinstance(b, dict) and b.get("type") == kind]


def wire_messages(message: JsonObject) -> list[JsonObject]:
    """Map one message to its chat-completions wire messages (WIRE-2)."""
    role = message.get("role")
    content = message.get("content", [])
    if role == "system":
        return [{"role": "system", "content": _joined_text(content)}]
    if role == "assistant":
        calls = _blocks_of(content, "tool-call")
        text = _joined_text(content)
        wire: JsonObject = {
            "role": "assistant",
            "content": text if text else ("" if calls else None),
        }
        reasoning = "".join(
            str(block.get("text", "")) for block in _blocks_of(content, "reasoning")
        )
        if calls and reasoning:
            wire["reasoning_content"] = reasoning
        if calls:
            wire["tool_calls"] = [
                {
                    "id": call.get("id"),
                    "type": "function",
                    "function": {
                        "name": call.get("name"),
                        "arguments": call.get("arguments"),
                    },
                }
                for call in calls
            ]
        return [wire]
    results = _blocks_of(content, "tool-result")
    text = _joined_text(content)
    out: list[JsonObject] = []
    if text or not results:
        out.append({"role": "user", "content": text})
    out.extend(
        {
            "role": "tool",
            "tool_call_id": result.get("toolCallId"),
            "content": _joined_text(result.get("content", [])) or NO_OUTPUT,
        }
        for result in results
    )
    return out


def build_chat_body(
    header: Header,
    messages: list[JsonObject],
    *,
    stream: bool = True,
    settings: JsonObject | None = None,
) -> JsonObject:
    """The chat-completions body for a request (WIRE-1, WIRE-3, WIRE-4, WIRE-5).

    `settings` are deployment members the log does not record (``thinking``,
    ``reasoning_effort``); they are placed after the stream members. A
    setting naming a contract or stream member raises `ValueError`
    (`check_settings`).
    """
    check_settings(settings)
    config = header["config"]
    wire: list[JsonObject] = []
    if "system" in header:
        wire.append({"role": "system", "content": header["system"]})
    for message in messages:
        wire.extend(wire_messages(message))
    body: JsonObject = {"model": config["model"], "messages": wire, "stream": stream}
    if stream:
        body["stream_options"] = {"include_usage": True}
    body.update(settings or {})
    if "tools" in header:
        body["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": tool["name"],
                    "description": tool.get("description", ""),
                    "parameters": tool.get("parameters", {}),
                },
            }
            for tool in header["tools"]
        ]
    for key, wire_key in (
        ("temperature", "temperature"),
        ("maxTokens", "max_tokens"),
        ("stop", "stop"),
    ):
        if key in config:
            body[wire_key] = config[key]
    return body


def contract_view(body: JsonObject) -> JsonObject:
    """The members of a wire body the contract determines, in body order."""
    return {key: value for key, value in body.items() if key in CONTRACT_KEYS}

"""Projection of surface events into model-visible messages.

Implements docs/spec.md section "Derived history" (DERIVE-1, DERIVE-2):
each surface event maps to at most one message; the derived history is the
surface, in order, mapped through `derive_event_message`.
"""

from __future__ import annotations

from reqfold.reference.json_values import JsonObject, canonical_json

SURFACE_TYPES = frozenset(
    {
        "user/message",
        "assistant/message",
        "tool/result",
        "context/message",
        "steering/message",
    }
)


def _framed(tag: str, data: JsonObject) -> JsonObject:
    source = data.get("source")
    kind = source.get("kind") if isinstance(source, dict) else None
    opening = f"<{tag} source={canonical_json(kind)}>"
    return {
        "role": "user",
        "content": [
            {"type": "text", "text": opening},
            *data.get("content", []),
            {"type": "text", "text": f"</{tag}>"},
        ],
    }


def derive_event_message(event: JsonObject) -> JsonObject | None:
    """The message a surface event contributes, or None (DERIVE-2).

    ``user/message`` and ``assistant/message`` carry their content; an
    assistant message with empty content contributes nothing;
    ``tool/result`` becomes a user message holding one tool-result block;
    ``context/message`` and ``steering/message`` are framed in tags naming
    their source kind.
    """
    kind = event.get("type")
    data = event.get("data")
    if not isinstance(data, dict):
        return None
    if kind == "user/message":
        return {"role": "user", "content": data.get("content", [])}
    if kind == "assistant/message":
        content = data.get("content", [])
        return {"role": "assistant", "content": content} if content else None
    if kind == "tool/result":
        return {
            "role": "user",
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": data.get("callId"),
                    "content": data.get("content", []),
                    "isError": data.get("isError", False),
                }
            ],
        }
    if kind == "context/message":
        return _framed("context", data)
    if kind == "steering/message":
        return _framed("steering", data)
    return None

"""Tools the loop executes: declared schemas and the code behind them.

A `Tool` is a schema (``name``, ``description``, ``parameters``; what the
header's ``tools`` records, TOOLS-1) plus an async ``execute`` function.
The loop runs a step's tool calls one after another, logging ``tool/call``
before and ``tool/result`` (``surfaceOp: "append"``, ``sourceEventSeqs:
[callSeq]``) after each, so a call and its result stay adjacent on the
surface. A tool may return a string, a list of content blocks, or a
`ToolResult`; an exception, or content that cannot be logged (JSON-1: a
lone surrogate from a ``surrogateescape``'d file name...), becomes an error
result (``isError: true``), never a failed turn.

What a running tool knows (`ToolContext`, `PostExecuteContext`) lives with
the loop in `reqfold.reference.loop.contexts`: this module imports neither.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from reqfold.reference.json_values import JsonObject, check_json_value

Content = str | list[JsonObject]
"""Message content as a listener or tool may give it: text or content blocks."""


def content_blocks(content: Content) -> list[JsonObject]:
    """Normalise text to ``[{"type": "text", "text": ...}]``; check blocks.

    Raises `TypeError` for anything else, and
    `reqfold.reference.errors.NotJsonValue` for content that cannot be logged (a
    lone surrogate, a NaN... JSON-1), so it fails here, before any append.
    """
    if isinstance(content, str):
        blocks: list[JsonObject] = [{"type": "text", "text": content}]
    elif isinstance(content, list) and all(
        isinstance(block, dict) and isinstance(block.get("type"), str)
        for block in content
    ):
        blocks = [dict(block) for block in content]
    else:
        raise TypeError("content must be a string or a list of content blocks")
    check_json_value(blocks, what="content")
    return blocks


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResult:
    """What a tool call produced: content blocks and whether it failed."""

    content: Content
    is_error: bool = False


Execute = Callable[[Any, Any], Awaitable["ToolResult | Content"]]
"""``execute(arguments, context)``: the parsed arguments, and the call's
`reqfold.reference.loop.contexts.ToolContext` (typed loosely here so this module does
not import the contexts, which import it)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Tool:
    """A tool schema and its implementation.

    `execute(arguments, context)` receives the parsed JSON arguments.
    """

    name: str
    description: str
    parameters: Mapping[str, Any] = field(
        default_factory=lambda: {"type": "object", "properties": {}}
    )
    execute: Execute

    def schema(self) -> JsonObject:
        """The schema as the header records it: name, description, parameters."""
        return {
            "name": self.name,
            "description": self.description,
            "parameters": _plain(self.parameters),
        }


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value

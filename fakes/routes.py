"""Replies routed by request: which scripted replies answer which requests.

A side request (a title generator, a summarizer) must not take the main
conversation's scripted reply: a `RequestMatch` says which requests a
route's replies are for, by any of the system text (a substring), the tool
set (the names, in any order; ``[]`` for none), the model, the API key
(compared by digest, so the key is never stored) or the last user message
(a substring). A request takes the next reply of the first route that
matches it and still has one; the plain queue is the fallback. Pure: the
JSON form is read here, `Script` applies it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reqfold.fakes.jsontypes import JsonObject, JsonValue

MATCH_KEYS = frozenset({"system", "tools", "model", "api_key", "last_user"})


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestMatch:
    """What a request must hold for a route to answer it (all of it)."""

    system: str | None = None
    tools: frozenset[str] | None = None
    model: str | None = None
    key: str | None = None
    """The digest of the API key (`reqfold.fakes.key_digest`)."""
    last_user: str | None = None

    def holds(self, request: Any) -> bool:
        """Whether `request` (a `ScriptedRequest`) matches."""
        if self.model is not None and request.model != self.model:
            return False
        if self.key is not None and request.key != self.key:
            return False
        if self.system is not None and self.system not in request.system_text:
            return False
        if self.tools is not None and frozenset(request.tool_names) != self.tools:
            return False
        return self.last_user is None or self.last_user in request.last_user_text

    def dump(self) -> JsonObject:
        """The JSON form (the key as its digest)."""
        value: JsonObject = {}
        if self.system is not None:
            value["system"] = self.system
        if self.tools is not None:
            value["tools"] = list[JsonValue](sorted(self.tools))
        if self.model is not None:
            value["model"] = self.model
        if self.key is not None:
            value["api_key_digest"] = self.key
        if self.last_user is not None:
            value["last_user"] = self.last_user
        return value


def parse_match(value: JsonValue, digest: Any) -> RequestMatch:
    """Read a match object; `digest` turns an API key into its digest.
    ValueError says what is wrong."""
    if not isinstance(value, dict) or not value:
        raise ValueError(
            "match must be an object with some of: " + ", ".join(sorted(MATCH_KEYS))
        )
    unknown = set(value) - MATCH_KEYS
    if unknown:
        raise ValueError(
            f"unknown match field(s) {sorted(unknown)}; use some of "
            + ", ".join(sorted(MATCH_KEYS))
        )
    texts: dict[str, str] = {}
    for name in ("system", "model", "api_key", "last_user"):
        item = value.get(name)
        if item is None:
            continue
        if not isinstance(item, str):
            raise ValueError(f"match.{name} must be a string")
        texts[name] = item
    tools = value.get("tools")
    names: frozenset[str] | None = None
    if tools is not None:
        if not isinstance(tools, list) or not all(isinstance(t, str) for t in tools):
            raise ValueError("match.tools must be an array of tool names")
        names = frozenset(str(tool) for tool in tools)
    key = texts.get("api_key")
    return RequestMatch(
        system=texts.get("system"),
        tools=names,
        model=texts.get("model"),
        key=digest(key) if key is not None else None,
        last_user=texts.get("last_user"),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestTexts:
    """What a route matches a request by, as its dialect reads it
    (`Dialect.texts`): every match field works the same in every dialect."""

    system: str = ""
    """The system text: system and developer messages, a ``system`` field,
    ``instructions``; joined by newlines."""
    last_user: str = ""
    """The text of the last user message that has text (an Anthropic
    message holding only tool results has none)."""
    tools: tuple[str, ...] = ()
    """The names of the request's tools (a tool without one is left out)."""


def joined(parts: list[str]) -> str:
    """Non-empty texts joined by newlines."""
    return "\n".join(part for part in parts if part)


def role_texts(messages: JsonValue, roles: tuple[str, ...]) -> list[str]:
    """The texts of the messages (or Responses input items) with these roles."""
    if not isinstance(messages, list):
        return []
    return [
        content_text(message.get("content"))
        for message in messages
        if isinstance(message, dict) and message.get("role") in roles
    ]


def last_user_text(messages: JsonValue) -> str:
    """The text of the last user message that has text, or `""`."""
    for text in reversed(role_texts(messages, ("user",))):
        if text:
            return text
    return ""


def tool_names(body: JsonObject) -> tuple[str, ...]:
    """The names of the request's tools (chat completions' ``function.name``,
    Anthropic's and Responses' ``name``)."""
    tools = body.get("tools")
    names: list[str] = []
    if not isinstance(tools, list):
        return ()
    for tool in tools:
        if not isinstance(tool, dict):
            continue
        function = tool.get("function")
        name = function.get("name") if isinstance(function, dict) else tool.get("name")
        if isinstance(name, str):
            names.append(name)
    return tuple(names)


def content_text(content: JsonValue) -> str:
    """A message content's text: a string, or its parts' ``text`` joined
    (chat ``text`` parts, Anthropic text blocks, Responses ``input_text``)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(part.get("text"))
            for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    return ""

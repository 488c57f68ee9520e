"""JSON value types shared by the fake's modules.

Parsed request bodies stay plain insertion-ordered dicts and lists end to
end: member order is part of what a provider's cache sees. The names are
the ones `reqfold.reference.json_values` uses (`JsonValue`, `JsonObject`); `fakes`
may not import `reference`, so it states them here, once, more precisely.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import TypeAlias, cast

JsonValue: TypeAlias = (
    "dict[str, JsonValue] | list[JsonValue] | str | int | float | bool | None"
)
JsonObject: TypeAlias = "dict[str, JsonValue]"


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def has_lone_surrogate(text: str) -> bool:
    """True when `text` holds an unpaired UTF-16 surrogate: not Unicode text."""
    # isascii() is O(1) in CPython: spares a scan of long ASCII strings.
    return not text.isascii() and _LONE_SURROGATE.search(text) is not None


def dumps_compact(value: object) -> str:
    """Compact JSON with member order kept and non-ASCII written raw."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def type_name(value: object) -> str:
    """The JSON type name of a parsed value, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def json_object(value: Mapping[str, object]) -> JsonObject:
    """A TypedDict (or other JSON-shaped mapping) as a plain JSON object."""
    return cast(JsonObject, dict(value))

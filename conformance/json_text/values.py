"""JSON values as the vector files hold them: strict text in, exact text out, equality.

`load_json` reads JSON text strictly (no repeated keys, no NaN tokens);
`encode_json` writes compact JSON the way the vector files spell values
Python's `json` cannot (``1e400``, a lone surrogate's escape), so any
value a vector holds goes out to an adapter and into a report unchanged.
`values_equal` is the comparison an implementation's answers are judged
by (JSON-2, JSON-3 with ``ordered``), lenient where JSON-5 lets an
implementation hold every number as a double. It differs from
`reqfold.conformance.json_text.judge_equal.same_json`, used on the logs and snapshots
the checker and the scenarios read, which allows no such rounding.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any, Final

from reqfold.reference.json_values import JsonValue, parse_json


def load_json(text: str) -> JsonValue:
    """Parse JSON text strictly: no repeated keys, no NaN/Infinity tokens.

    A number too large for a double (``1e400``) is valid JSON text and
    becomes ``float("inf")``; the vectors use it to test JSON-1.
    """
    return parse_json(text)


def encode_json(value: JsonValue) -> str:
    """Compact JSON text of `value`, members in insertion order.

    Unlike `json.dumps`, an infinite float is written as the number
    ``1e400`` (or ``-1e400``), the way the vector files spell it, and a
    lone surrogate as its escape (``"\\ud800"``), so the text stays JSON
    and UTF-8; NaN raises ValueError.

    Most values hold no infinity and are not nested thousands deep: the C
    encoder writes them (a lone surrogate can only sit in a string, so
    escaping the whole text is escaping each string), and only the rest
    take the walk below, which costs ten times as much (the codec vectors
    send thousands of requests).
    """
    try:
        text = _COMPACT.encode(value)
    except (ValueError, RecursionError):  # an infinity, NaN, or too deep
        return _encode_walking(value)
    return _escape_lone_surrogates(text)


_COMPACT: Final = json.JSONEncoder(
    ensure_ascii=False, allow_nan=False, separators=(",", ":")
)


def _encode_walking(value: JsonValue) -> str:
    """`encode_json`, member by member: writes infinities as ``1e400``."""
    parts: list[str] = []
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, _Token):
            parts.append(item.text)
        elif isinstance(item, dict):
            stack.append(_Token("}"))
            members = list(item.items())
            for index in range(len(members) - 1, -1, -1):
                key, child = members[index]
                stack.append(child)
                prefix = "," if index else ""
                stack.append(_Token(prefix + _string(key) + ":"))
            stack.append(_Token("{"))
        elif isinstance(item, list):
            stack.append(_Token("]"))
            for index in range(len(item) - 1, -1, -1):
                stack.append(item[index])
                if index:
                    stack.append(_Token(","))
            stack.append(_Token("["))
        elif isinstance(item, float) and not math.isfinite(item):
            if math.isnan(item):
                raise ValueError("NaN cannot be written as JSON")
            parts.append("1e400" if item > 0 else "-1e400")
        elif isinstance(item, str):
            parts.append(_string(item))
        else:
            parts.append(json.dumps(item, ensure_ascii=False))
    return "".join(parts)


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _string(text: str) -> str:
    """A JSON string literal; a lone surrogate (JSON-1 vectors hold some) is
    written as its ``\\uXXXX`` escape, so the text is still UTF-8."""
    return _escape_lone_surrogates(json.dumps(text, ensure_ascii=False))


def _escape_lone_surrogates(text: str) -> str:
    """`text` with each lone surrogate written as its ``\\uXXXX`` escape."""
    return _LONE_SURROGATE.sub(lambda found: f"\\u{ord(found.group()):04x}", text)


@dataclass(frozen=True, slots=True)
class _Token:
    text: str


def values_equal(a: JsonValue, b: JsonValue, *, ordered: bool = False) -> bool:
    """Compare JSON values (JSON-2); with ``ordered``, member order too (JSON-3)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b or _same_double(a, b)
    if isinstance(a, str) and isinstance(b, str):
        return a == b
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(
            values_equal(x, y, ordered=ordered) for x, y in zip(a, b, strict=True)
        )
    if isinstance(a, dict) and isinstance(b, dict):
        if (list(a) != list(b)) if ordered else (a.keys() != b.keys()):
            return False
        return all(values_equal(a[key], b[key], ordered=ordered) for key in a)
    return False


DOUBLE_EXACT: Final = 2**53
"""Beyond this magnitude not every integer is a double (JSON-5)."""


def _same_double(a: int | float, b: int | float) -> bool:
    """An integer beyond 2^53 matches a number with the same nearest double.

    JSON-5: an implementation may hold every number as a double, so such an
    integer need only come back as its nearest double (JavaScript writes
    9007199254740993 back as 9007199254740992).
    """
    if not any(isinstance(x, int) and abs(x) > DOUBLE_EXACT for x in (a, b)):
        return False
    try:
        return float(a) == float(b)
    except OverflowError:  # beyond any double: only an exact match counts
        return False

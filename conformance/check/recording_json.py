"""A strict JSON parser that records every problem and reads on, for the
checker's slow path (named for that: it records, where the suite's other
strict readers refuse).

Implements the text side of docs/spec.md JSON-1 for `reqfold.conformance.check.lines`
(and the capture reader, `reqfold.conformance.check.reconstruction`): `parse_json`
reads one JSON text and records every JSON-1 problem on the way (a duplicate
key, NaN or Infinity, a number out of range for a double, a lone surrogate
escape) instead of refusing the text, so the check can go on and name each
problem; text that is not JSON at all raises `JsonDamaged`.

Theory of operation. The standard library's parser does the work, with
hooks that record problems. Nesting too deep for its recursion falls back
to `_parse_iteratively`, a stack machine over a token regex, so no input
can overflow a stack.

Not `reqfold.conformance.report.refusing_json`, which refuses a file at its
first problem, nor `reqfold.fakes.provider_json`, which judges a request
body as a provider would: this one goes on past every problem.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from reqfold.conformance.json_text.damage import at_character
from reqfold.reference.json_values import has_lone_surrogate


class JsonDamaged(ValueError):
    """The text is not JSON at all (JSONL-4, or JSONL-3 on a torn tail)."""

    def __init__(self, reason: str, position: int) -> None:
        super().__init__(at_character(reason, position))
        self.reason = reason
        self.position = position


@dataclass(slots=True)
class ParsedJson:
    """A value read leniently, with every JSON-1 problem met on the way."""

    value: Any
    problems: list[str] = field(default_factory=list)


def _recording_hooks(problems: list[str]) -> dict[str, Any]:
    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        result = dict(items)
        if len(result) != len(items):
            seen: set[str] = set()
            for key, _ in items:
                if key in seen:
                    problems.append(f"an object repeats the key {key!r}")
                    break
                seen.add(key)
        return result

    def constant(name: str) -> float:
        problems.append(f"{name} is not a JSON number")
        return math.nan

    def number(text: str) -> float:
        value = float(text)
        if not math.isfinite(value):
            problems.append(f"the number {text[:40]} is out of range for a double")
        return value

    return {
        "object_pairs_hook": pairs,
        "parse_constant": constant,
        "parse_float": number,
        "parse_int": lambda text: _integer(text, problems),
    }


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _integer(text: str, problems: list[str]) -> int | float:
    """An integer literal; one too large for a double is a JSON-1 problem.

    Such a literal is read as a float (infinity), which also keeps `int`
    from refusing one of more than 4,300 digits.
    """
    if len(text) > 308:
        value = float(text)
        if not math.isfinite(value):
            problems.append(f"the number {text[:40]} is out of range for a double")
            return value
    return int(text)


def parse_json(text: str) -> ParsedJson:
    """Parse one JSON text leniently, recording every JSON-1 problem.

    Duplicate keys keep their last value, NaN and Infinity are read as
    floats; each is recorded in `ParsedJson.problems`. Raises `JsonDamaged`
    when the text is not JSON. Nesting depth is bounded by memory only.
    """
    problems: list[str] = []
    try:
        value = json.loads(text, **_recording_hooks(problems))
    except json.JSONDecodeError as error:
        raise JsonDamaged(error.msg.lower(), error.pos) from None
    except RecursionError:
        problems.clear()
        value = _parse_iteratively(text, problems)  # checks surrogates itself
        return ParsedJson(value, problems)
    if not problems and _SURROGATE_ESCAPE.search(text) is not None:
        # only a \uD800-\uDFFF escape gives a lone surrogate (decoded UTF-8
        # holds none), so most texts need no second look
        try:
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            problems.append(LONE_SURROGATE)
        except RecursionError:
            pass
    return ParsedJson(value, problems)


_TOKEN = re.compile(
    r"""[ \t\n\r]*(?:
      (?P<string>"(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*")
    | (?P<number>-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)
    | (?P<literal>true|false|null|NaN|-?Infinity)
    | (?P<punct>[\[\]{},:])
    )""",
    re.VERBOSE,
)
_LITERALS: dict[str, Any] = {"true": True, "false": False, "null": None}


LONE_SURROGATE = "a string holds a lone surrogate escape, not a character"


def _string(text: str, problems: list[str]) -> str:
    """A string token's value; a lone surrogate in it is a JSON-1 problem."""
    value: str = json.loads(text)
    if "\\u" in text and has_lone_surrogate(value) and LONE_SURROGATE not in problems:
        problems.append(LONE_SURROGATE)
    return value


def _scalar(match: re.Match[str], problems: list[str]) -> Any:
    kind = match.lastgroup
    text = match.group(kind or "")
    if kind == "string":
        return _string(text, problems)
    if kind == "number":
        if any(c in text for c in ".eE"):
            value = float(text)
            if not math.isfinite(value):
                problems.append(f"the number {text[:40]} is out of range for a double")
            return value
        return _integer(text, problems)
    if text in _LITERALS:
        return _LITERALS[text]
    problems.append(f"{text} is not a JSON number")
    return math.nan


def _parse_iteratively(text: str, problems: list[str]) -> Any:
    """A stack-machine JSON parser for input nested too deep for recursion."""
    stack: list[Any] = []  # the open containers, innermost last
    keys: list[str] = []  # the pending key of each open container ("" for arrays)
    result: Any = None
    position = 0
    state = "value"  # value | first-item | key | first-key | colon | after

    def place(value: Any) -> None:
        nonlocal result
        if not stack:
            result = value
        elif isinstance(stack[-1], list):
            stack[-1].append(value)
        else:
            if keys[-1] in stack[-1]:
                problems.append(f"an object repeats the key {keys[-1]!r}")
            stack[-1][keys[-1]] = value

    def close() -> str:
        stack.pop()
        keys.pop()
        return "after"

    while True:
        if state == "after" and not stack:
            if text[position:].strip(" \t\n\r"):
                raise JsonDamaged("extra data", position)
            return result
        match = _TOKEN.match(text, position)
        if match is None:
            rest = text[position:].strip(" \t\n\r")
            reason = "unexpected character" if rest else "unexpected end of text"
            raise JsonDamaged(reason, position)
        at = match.start(match.lastgroup or 0)
        position = match.end()
        punct = match.group("punct")
        if state in ("value", "first-item"):
            if punct in ("[", "{"):
                container: Any = [] if punct == "[" else {}
                place(container)
                stack.append(container)
                keys.append("")
                state = "first-item" if punct == "[" else "first-key"
            elif state == "first-item" and punct == "]":
                state = close()
            elif punct is not None:
                raise JsonDamaged("expecting value", at)
            else:
                place(_scalar(match, problems))
                state = "after"
        elif state in ("key", "first-key"):
            if state == "first-key" and punct == "}":
                state = close()
            elif match.group("string") is None:
                raise JsonDamaged(
                    "expecting property name enclosed in double quotes", at
                )
            else:
                keys[-1] = _string(match.group("string"), problems)
                state = "colon"
        elif state == "colon":
            if punct != ":":
                raise JsonDamaged("expecting ':' delimiter", at)
            state = "value"
        elif punct == ",":
            state = "value" if isinstance(stack[-1], list) else "key"
        elif (punct == "]" and isinstance(stack[-1], list)) or (
            punct == "}" and isinstance(stack[-1], dict)
        ):
            state = close()
        else:
            raise JsonDamaged("expecting ',' delimiter", at)

"""JSON as a provider's parser reads a request body: what it accepts.

Named for what it does: of the suite's three strict JSON readers this is
the one that answers a request body as a real provider would (it keeps a
duplicated member's last value, and refuses with an `InvalidRequest`).

A body must be UTF-8 JSON text without `NaN`/`Infinity`, numbers out of
double range (`1e400`), integers longer than Python converts (4300
digits), unpaired UTF-16 surrogate escapes (`"\\ud800"`) or nesting deeper
than the interpreter's recursion limit; anything else is an
`InvalidRequest` with a sentence saying what is wrong.

Two parsers give one answer. msgspec decodes the body first: it refuses
every one of those cases itself and keeps member order (and, like the
standard library, the last value of a duplicated member in the place of
the first), at two to three times the speed. When msgspec refuses a body,
the standard library parses it again with the checks above, so the error
says what the standard parser says (line and column), and a body that
only msgspec refuses would still be accepted.

The suite has strict readers of its own (`conformance/check/recording_json.py`
records every problem of a log, `conformance/report/refusing_json.py` refuses
a report file); the fakes import nothing of the suite, and a provider's
parser differs from both (it keeps a duplicated member's last value).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable

import msgspec

from reqfold.fakes.errors import InvalidRequest
from reqfold.fakes.jsontypes import JsonValue, has_lone_surrogate

_DECODER = msgspec.json.Decoder()


def parse_json_body(raw: bytes) -> JsonValue:
    """Parse a request body as strict JSON.

    Raises:
        InvalidRequest: the body is empty, not UTF-8, or not strict JSON.
    """
    try:
        value: JsonValue = _DECODER.decode(raw)
    except (msgspec.MsgspecError, RecursionError, ValueError):
        return parse_json_body_slowly(raw)
    return value


def parse_json_body_slowly(raw: bytes) -> JsonValue:
    """The standard library's parse with the same checks (and its messages).

    Raises:
        InvalidRequest: the body is empty, not UTF-8, or not strict JSON.
    """
    if not raw.strip():
        raise InvalidRequest("the request body is empty; expected a JSON object")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InvalidRequest(
            f"the request body is not valid UTF-8 (byte {error.start})"
        ) from None
    try:
        value: JsonValue = json.loads(
            text, parse_constant=_reject_constant, parse_float=_finite_float
        )
    except json.JSONDecodeError as error:
        raise InvalidRequest(
            f"the request body is not valid JSON: {error.msg} at line {error.lineno} "
            f"column {error.colno}"
        ) from None
    except RecursionError:
        raise InvalidRequest("the request body is nested too deeply") from None
    except ValueError as error:
        # e.g. an integer literal longer than Python's int conversion limit
        raise InvalidRequest(
            f"the request body is not acceptable JSON: {error}"
        ) from None
    _reject_lone_surrogates(value)
    return value


def _reject_constant(name: str) -> object:
    raise InvalidRequest(
        f"the request body is not valid JSON: {name} is not a JSON value"
    )


def _finite_float(literal: str) -> float:
    number = float(literal)
    if not math.isfinite(number):
        raise InvalidRequest(
            f"the request body is not valid JSON: the number {literal[:40]} "
            "is out of range (not a finite double)"
        )
    return number


def _reject_lone_surrogates(value: JsonValue) -> None:
    """Refuse strings (keys or values) holding an unpaired UTF-16 surrogate.

    JSON allows `\\ud800` escapes, but the text is not valid Unicode: it
    cannot be encoded as UTF-8 in a reply or in the capture log.
    """
    stack: list[JsonValue] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            strings: Iterable[str] = (item,)
        elif isinstance(item, dict):
            strings = item.keys()
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
            continue
        else:
            continue
        for text in strings:
            if has_lone_surrogate(text):
                raise InvalidRequest(
                    "the request body is not valid JSON text: a string contains "
                    "an unpaired UTF-16 surrogate escape"
                )

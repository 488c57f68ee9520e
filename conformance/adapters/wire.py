"""What an adapter writes on stdout, read as JSON-RPC 2.0: pure checks, no I/O.

`parse_message` turns one stdout line into a JSON-RPC 2.0 object, strictly
(UTF-8, JSON without NaN or repeated keys, no lone surrogate in a string);
`response_problem` says whether a message answers a request (the echoed
``id``, exactly one of ``result`` and ``error {code}``);
`is_notification` tells a notification apart. Each says what is wrong in
one line; `reqfold.conformance.adapters.connection.StdioConnection` turns that
into an `AdapterProtocolError` and kills the adapter, since a stream that
broke once cannot be trusted for the next answer.
"""

from __future__ import annotations

import re
import reprlib
from typing import Any

from reqfold.conformance.json_text.values import load_json
from reqfold.conformance.quoting import quoted_bytes, quoted_value
from reqfold.reference.json_values import JsonObject, has_lone_surrogate

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def parse_message(line: bytes) -> JsonObject:
    """One stdout line as a JSON-RPC 2.0 object; ValueError says why not."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"not UTF-8 text: {quoted_bytes(line)}") from None
    try:
        message: Any = load_json(text)
    except (ValueError, RecursionError) as error:
        raise ValueError(f"not a JSON line ({error}): {quoted_bytes(line)}") from None
    if _SURROGATE_ESCAPE.search(text) and _holds_lone_surrogate(message):
        raise ValueError(
            f"the line holds a string with a lone surrogate, which is not"
            f" Unicode text: {quoted_bytes(line)}"
        )
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        raise ValueError(f"not a JSON-RPC 2.0 message: {quoted_bytes(line)}")
    return message


def response_problem(response: JsonObject, request_id: int) -> str | None:
    """Why `response` does not answer `request_id` with a result or an
    error, or None when it does."""
    echoed = response.get("id")
    if (
        isinstance(echoed, bool)
        or not isinstance(echoed, int | float)
        or echoed != request_id
    ):
        return (
            f"response id {quoted_value(echoed)} does not echo request id {request_id}"
        )
    has_result, body = "result" in response, response.get("error")
    if has_result == (body is not None) or (
        body is not None
        and not (
            isinstance(body, dict)
            and isinstance(body.get("code"), int)
            and not isinstance(body.get("code"), bool)
        )
    ):
        return "a response needs exactly one of result or error {code, message}"
    if body is not None and not isinstance(body.get("message"), str):
        return (
            "an error's message must be a string (JSON-RPC 2.0), not"
            f" {reprlib.repr(body.get('message'))}"
        )
    return None


def is_notification(message: JsonObject) -> bool:
    """A JSON-RPC notification: a ``method`` and no ``id`` member."""
    return "id" not in message and isinstance(message.get("method"), str)


def _holds_lone_surrogate(value: Any) -> bool:
    """True when a string (or key) anywhere in `value` has a lone surrogate."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if has_lone_surrogate(item):
                return True
        elif isinstance(item, dict):
            stack.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False

"""Reading an adapter's stdout lines as JSON-RPC 2.0, without a process.

`reqfold.conformance.adapters.wire` is the pure half of `StdioConnection`: these
pin what it accepts and what it refuses (the process tests in
test_vector_run.py and test_connection_notifications.py show the
connection killing an adapter that writes such a line).
"""

from __future__ import annotations

import pytest

from reqfold.conformance.adapters.wire import (
    is_notification,
    parse_message,
    response_problem,
)


def test_a_json_rpc_line_is_read_with_its_members_in_order() -> None:
    message = parse_message(b'{"jsonrpc": "2.0", "id": 1, "result": {"b": 1, "a": 2}}')
    assert message == {"jsonrpc": "2.0", "id": 1, "result": {"b": 1, "a": 2}}
    assert list(message["result"]) == ["b", "a"]


@pytest.mark.parametrize(
    ("line", "why"),
    [
        (b'{"jsonrpc": "2.0", "id": 1, "result": "\xff"}', "not UTF-8 text"),
        (b'{"jsonrpc": "2.0", "id": 1, "result": NaN}', "not a JSON line"),
        (b'{"jsonrpc": "2.0", "id": 1, "id": 2, "result": 1}', "not a JSON line"),
        (b'{"jsonrpc": "2.0", "id": 1, "result": "\\ud800"}', "lone surrogate"),
        (b'{"jsonrpc": "2.0", "id": 1, "result": {"\\udc00": 1}}', "lone surrogate"),
        (b'{"jsonrpc": "1.0", "id": 1, "result": 1}', "not a JSON-RPC 2.0 message"),
        (b"[1]", "not a JSON-RPC 2.0 message"),
        (b"[" * 100_000, "not a JSON line"),
    ],
)
def test_a_line_that_is_not_json_rpc_is_refused_saying_why(
    line: bytes, why: str
) -> None:
    with pytest.raises(ValueError, match=why):
        parse_message(line)


def test_an_escaped_surrogate_pair_is_one_character_not_a_lone_surrogate() -> None:
    message = parse_message(b'{"jsonrpc": "2.0", "id": 1, "result": "\\ud83d\\ude00"}')
    assert message["result"] == "\N{GRINNING FACE}"


@pytest.mark.parametrize(
    "response",
    [
        {"jsonrpc": "2.0", "id": 7, "result": None},
        {"jsonrpc": "2.0", "id": 7.0, "result": {}},
        {"jsonrpc": "2.0", "id": 7, "error": {"code": -32000, "message": "no"}},
    ],
)
def test_a_response_that_echoes_the_id_with_one_answer_is_accepted(
    response: dict[str, object],
) -> None:
    assert response_problem(response, 7) is None


@pytest.mark.parametrize(
    ("response", "why"),
    [
        ({"jsonrpc": "2.0", "id": 8, "result": 1}, "does not echo request id 7"),
        ({"jsonrpc": "2.0", "id": True, "result": 1}, "does not echo"),
        ({"jsonrpc": "2.0", "id": "7", "result": 1}, "does not echo"),
        ({"jsonrpc": "2.0", "result": 1}, "does not echo"),
        ({"jsonrpc": "2.0", "id": 7}, "exactly one of result or error"),
        (
            {"jsonrpc": "2.0", "id": 7, "result": 1, "error": {"code": 1}},
            "exactly one",
        ),
        ({"jsonrpc": "2.0", "id": 7, "error": {"code": True}}, "exactly one"),
        ({"jsonrpc": "2.0", "id": 7, "error": {"code": 1.5}}, "exactly one"),
        ({"jsonrpc": "2.0", "id": 7, "error": "no"}, "exactly one"),
        ({"jsonrpc": "2.0", "id": 7, "error": {"code": 1}}, "message must be a string"),
        (
            {"jsonrpc": "2.0", "id": 7, "error": {"code": 1, "message": ["x"] * 9}},
            "message must be a string (JSON-RPC 2.0), not ['x', 'x', 'x', 'x',",
        ),
    ],
)
def test_a_response_that_does_not_answer_the_request_says_why(
    response: dict[str, object], why: str
) -> None:
    problem = response_problem(response, 7)
    assert problem is not None
    assert why in problem


def test_a_notification_has_a_method_and_no_id() -> None:
    assert is_notification({"jsonrpc": "2.0", "method": "turn/ended"})
    assert not is_notification({"jsonrpc": "2.0", "id": 1, "method": "turn/ended"})
    assert not is_notification({"jsonrpc": "2.0", "method": 3})

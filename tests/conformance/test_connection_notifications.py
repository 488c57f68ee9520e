"""StdioConnection keeps an adapter's notifications apart from its responses."""

from __future__ import annotations

import sys

import pytest

from reqfold.conformance.adapters.connection import StdioConnection
from reqfold.conformance.errors import AdapterProtocolError, AdapterTimeout

# An adapter that answers every request after sending a notification naming it,
# and, for "chatter", also writes a line that is neither answer nor notification.
SCRIPT = r"""
import json, sys
for line in sys.stdin:
    request = json.loads(line)
    method = request["method"]
    note = {"jsonrpc": "2.0", "method": "note/seen", "params": {"of": method}}
    print(json.dumps(note), flush=True)
    if method == "chatter":
        print(json.dumps({"jsonrpc": "2.0", "id": 999, "result": {}}), flush=True)
    answer = {"jsonrpc": "2.0", "id": request["id"], "result": {"ok": method}}
    print(json.dumps(answer), flush=True)
    if method == "shutdown":
        break
"""


@pytest.fixture
def connection() -> StdioConnection:
    return StdioConnection([sys.executable, "-c", SCRIPT], timeout=5)


@pytest.mark.slow
def test_notifications_sent_before_a_response_are_kept_in_order(
    connection: StdioConnection,
) -> None:
    try:
        assert connection.request("first", {})["result"] == {"ok": "first"}
        assert connection.request("second", {})["result"] == {"ok": "second"}
        seen = [connection.receive_notification()["params"]["of"] for _ in range(2)]
        assert seen == ["first", "second"]
    finally:
        connection.close()


@pytest.mark.slow
def test_waiting_for_a_notification_that_never_comes_times_out_and_kills(
    connection: StdioConnection,
) -> None:
    try:
        connection.request("first", {})
        connection.receive_notification()
        with pytest.raises(AdapterTimeout):
            connection.receive_notification(timeout=0.2)
        assert not connection.alive
    finally:
        connection.close()


@pytest.mark.slow
def test_a_response_nobody_asked_for_is_still_a_protocol_error(
    connection: StdioConnection,
) -> None:
    try:
        with pytest.raises(AdapterProtocolError, match="does not echo"):
            connection.request("chatter", {})
    finally:
        connection.close()

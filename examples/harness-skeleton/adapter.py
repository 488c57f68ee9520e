#!/usr/bin/env python3
"""A harness adapter skeleton: the adapter protocol's loop, ready for your harness.

Run it as it is and reqfold already talks to it:

    reqfold run --impl "python3 examples/harness-skeleton/adapter.py" \\
        --only scenarios --scenario plain-turns

It answers ``initialize`` and ``shutdown``; every other method answers
"not implemented yet", so the run's first problem names the method to
write next (docs/harness-guide.md, "What to implement, in order"). Fill in
the handlers below with calls into your harness; keep stdout for protocol
messages only (log to stderr). Standard library only, Python 3.11+.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable
from typing import Any

NAME, VERSION = "my-harness", "0.0.1"
REVISIONS = ["session-prefix"]  # the revision your harness implements

_write_lock = threading.Lock()


def send(message: dict[str, Any]) -> None:
    """One JSON-RPC message, one line, flushed (thread-safe: a turn running
    in another thread sends its notifications through here too)."""
    line = json.dumps({"jsonrpc": "2.0", **message}, separators=(",", ":"))
    with _write_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def notify(method: str, params: dict[str, Any]) -> None:
    """A notification: ``contributor/started``, ``turn/ended``."""
    send({"method": method, "params": params})


class NotImplementedYet(Exception):
    """A method the skeleton does not serve yet: answered -32601."""


def todo(method: str, step: str) -> Callable[[dict[str, Any]], Any]:
    def handler(params: dict[str, Any]) -> Any:
        raise NotImplementedYet(
            f"{method} is not implemented yet: {step}"
            " (docs/harness-guide.md, 'What to implement, in order')"
        )

    return handler


def initialize(params: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": NAME,
        "version": VERSION,
        "language": "python",
        "revisions": REVISIONS,
        "capabilities": ["harness"],
    }


HANDLERS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "initialize": initialize,
    "shutdown": lambda params: None,
    # Step 2: create your session file at params["log"], answer {"log": path}.
    "session/open": todo("session/open", "create the session's log (step 2)"),
    # Step 2: build your loop over the session, pointed at params["provider"].
    "instance/start": todo("instance/start", "start a loop instance (step 2)"),
    # Step 3: start a turn, answer {} at once, notify turn/ended when it ends.
    "instance/send": todo("instance/send", "start a turn (step 3)"),
    "instance/cancel": todo("instance/cancel", "cancel the running turn (step 3)"),
    "instance/dispose": todo("instance/dispose", "dispose the instance (step 3)"),
    "instance/inject": todo("instance/inject", "inject a message (step 3)"),
    "instance/update": todo("instance/update", "change the next request (step 3)"),
    "instance/compact": todo("instance/compact", "compact the session (step 3)"),
    # Step 4: release a blocked contributor.
    "contributor/release": todo("contributor/release", "contributors (step 4)"),
}


def answer(request: Any) -> dict[str, Any]:
    """The response to one request (an error response when it is no request)."""
    if not isinstance(request, dict) or not isinstance(request.get("method"), str):
        return {"id": None, "error": {"code": -32600, "message": "not a request"}}
    ident = request.get("id")
    handler = HANDLERS.get(request["method"])
    if handler is None:
        message = f"unknown method {request['method']}"
        return {"id": ident, "error": {"code": -32601, "message": message}}
    try:
        return {"id": ident, "result": handler(request.get("params") or {})}
    except NotImplementedYet as missing:
        return {"id": ident, "error": {"code": -32601, "message": str(missing)}}
    except Exception as bug:  # your harness failed: say so, keep serving
        sys.stderr.write(f"{NAME}: {bug!r}\n")
        return {"id": ident, "error": {"code": -32603, "message": repr(bug)}}


def main() -> int:
    for line in sys.stdin:
        try:
            request = json.loads(line)
        except ValueError:
            send({"id": None, "error": {"code": -32700, "message": "not JSON"}})
            continue
        send(answer(request))
        if isinstance(request, dict) and request.get("method") == "shutdown":
            return 0
    return 0  # end of input also means exit 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Small session logs of one-step turns that declare no revision, for the
tests of revision inference (test_revision_single_pass.py,
test_check_paths_agree.py): one builder, so both read the same logs.
Importable as ``undeclared_logs`` (`pythonpath = ["tests/support"]`).
"""

from __future__ import annotations

import json

STORAGE = b'{"type":"session","version":0,"id":"s","createdAt":1}\n'
"""The storage line, naming no revision."""
USER = {"role": "user", "content": [{"type": "text", "text": "rules"}]}
"""A message a header event's message field may hold."""


def event_line(seq: int, kind: str, data: object, **members: object) -> bytes:
    """One event line, compact JSON with its newline."""
    value = {"type": kind, "seq": seq, "time": 1, "data": data, **members}
    return json.dumps(value, separators=(",", ":")).encode() + b"\n"


def one_step_turns(header_events: list[tuple[str, dict[str, object]]]) -> list[bytes]:
    """A valid log of one one-step turn per header event ``(type, data)``,
    declaring no revision; a snapshot (``request/header``) gets ``reason``
    ``initial``. Turn N's header event is line 7N - 2."""
    events: list[tuple[str, object, dict[str, object]]] = []
    for turn, (kind, body) in enumerate(header_events, start=1):
        if kind == "request/header":
            body = {**body, "reason": "initial"}
        text = {"content": [{"type": "text", "text": "go"}]}
        reply = {"turn": turn, "step": 1, "content": [{"type": "text", "text": "ok"}]}
        events += [
            ("turn/start", {"turn": turn, "trigger": {"kind": "message"}}, {}),
            ("user/message", text, {"surfaceOp": "append"}),
            ("step/start", {"turn": turn, "step": 1}, {}),
            (kind, body, {}),
            ("assistant/message", reply, {"surfaceOp": "append"}),
            ("step/end", {"turn": turn, "step": 1}, {}),
            ("turn/end", {"turn": turn, "reason": {"kind": "completed"}}, {}),
        ]
    return [STORAGE] + [
        event_line(seq, kind, data, **members)
        for seq, (kind, data, members) in enumerate(events)
    ]

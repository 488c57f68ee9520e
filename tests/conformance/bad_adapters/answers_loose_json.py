"""Answers three codec/canonical requests with text that Python's json.loads
accepts but that is not JSON (or not Unicode text): the 1st with a NaN
result, the 2nd with a repeated ``header`` key, the 3rd with a string
holding a lone surrogate (``"\\ud800"``). Each is an error for that case
only, never a crash of the suite. The count survives restarts through
files in the folder named by REQFOLD_BAD_STATE, so each breach happens
once."""

import os
from pathlib import Path
from typing import Any

from _serve import serve_broken

from reqfold.reference.shells import adapter

STATE = Path(os.environ["REQFOLD_BAD_STATE"])
original = adapter.METHODS["codec/canonical"]
real_response = adapter._response
current = 0
LOOSE = {
    1: '{"jsonrpc":"2.0","id":%d,"result":{"header":NaN}}\n',
    2: '{"jsonrpc":"2.0","id":%d,"result":{"header":{},"header":{}}}\n',
    3: '{"jsonrpc":"2.0","id":%d,"result":{"header":{"system":"\\ud800"}}}\n',
}


def canonical(params: dict[str, Any]) -> dict[str, Any]:
    global current
    current = len(list(STATE.iterdir())) + 1
    (STATE / str(current)).touch()
    return original(params)


def response(request_id: Any, **kwargs: Any) -> str:
    if current in LOOSE and isinstance(request_id, int):
        text = LOOSE[current] % request_id
        globals()["current"] = 0
        return text
    return real_response(request_id, **kwargs)


adapter._response = response
serve_broken({"codec/canonical": canonical})

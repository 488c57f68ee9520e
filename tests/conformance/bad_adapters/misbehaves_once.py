"""Breaks the protocol three times in one run, then behaves: on the 2nd
codec/equals request it hangs, on the 4th it writes a garbage line, on
the 6th it answers with the wrong id. The count survives restarts through
files in the folder named by REQFOLD_BAD_STATE, so each breach happens
once. Each is an error for that case only; the run goes on."""

import os
import sys
import threading
from pathlib import Path
from typing import Any

from _serve import serve_broken

from reqfold.reference.shells import adapter

STATE = Path(os.environ["REQFOLD_BAD_STATE"])
original = adapter.METHODS["codec/equals"]
real_response = adapter._response
current = 0


def _count() -> int:
    seen = len(list(STATE.iterdir())) + 1
    (STATE / str(seen)).touch()
    return seen


def equals(params: dict[str, Any]) -> dict[str, Any]:
    global current
    current = _count()
    if current == 2:
        threading.Event().wait()
    if current == 4:
        sys.stdout.write("this is not JSON\n")
        sys.stdout.flush()
    return original(params)


def response(request_id: Any, **kwargs: Any) -> str:
    if current == 6 and isinstance(request_id, int):
        return real_response(request_id + 1000, **kwargs)
    return real_response(request_id, **kwargs)


adapter._response = response
serve_broken({"codec/equals": equals})

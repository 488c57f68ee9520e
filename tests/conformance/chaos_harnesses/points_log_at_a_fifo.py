"""Writes its session log where the suite asked, but answers ``session/open``
with the path of a named pipe (FIFO) it made beside it, which nobody ever
writes to. Reading that "log" would block forever: the suite must read
only a regular file there, and judge the session as one whose log is not
where the harness said."""

from __future__ import annotations

import os

from _chaos import say, serve

from reqfold.reference.json_values import JsonObject
from reqfold.reference.shells.harness_adapter import HarnessServer


class PointsLogAtAFifo(HarnessServer):
    async def open_session(self, params: JsonObject) -> JsonObject:
        result = await super().open_session(params)
        fifo = f"{result['log']}.fifo"
        os.mkfifo(fifo)
        say(f"the log is at {result['log']}, but the answer says {fifo}")
        return {"log": fifo}


serve(PointsLogAtAFifo)

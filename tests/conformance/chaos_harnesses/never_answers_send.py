"""Never answers ``instance/send``: the handler waits forever, and as the
adapter handles requests in order, nothing else is answered either. The
suite must give up after --timeout and kill it. Each process records
``PID waiting`` (see `_chaos.record_pid`) once it holds a send, so a test
can tell the adapter is hung."""

from __future__ import annotations

import asyncio
import os

from _chaos import record_pid, say, serve

from reqfold.reference.json_values import JsonObject
from reqfold.reference.shells.harness_adapter import HarnessServer


class NeverAnswersSend(HarnessServer):
    async def send(self, params: JsonObject) -> JsonObject:
        say(f"instance/send for {params.get('instance')} will never be answered")
        record_pid(os.getpid(), "waiting")
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


serve(NeverAnswersSend)

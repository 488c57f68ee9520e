"""Never answers ``instance/send``: the handler waits forever, and as the
adapter handles requests in order, nothing else is answered either. The
suite must give up after --timeout and kill it."""

from __future__ import annotations

import asyncio

from _chaos import say, serve

from reference.harness_adapter import HarnessServer
from reference.json_values import JsonObject


class NeverAnswersSend(HarnessServer):
    async def send(self, params: JsonObject) -> JsonObject:
        say(f"instance/send for {params.get('instance')} will never be answered")
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


serve(NeverAnswersSend)

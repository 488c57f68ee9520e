"""Refuses ``instance/start`` with a message full of terminal control
sequences (set the title, clear the screen, a C1 ``CSI``): a refused step's
message is shown to the user and written to the reports, and must arrive
there as escapes, never acting on a terminal."""

from __future__ import annotations

from typing import Any

from _chaos import serve

from reqfold.reference.json_values import JsonObject
from reqfold.reference.shells.adapter import RpcError
from reqfold.reference.shells.harness_adapter import HarnessServer

HOSTILE = "no\x1b]0;pwned\x07\x1b[2J\x9b2J"


class RefusesInEscapes(HarnessServer):
    async def handle(self, method: str, params: JsonObject) -> Any:
        if method == "instance/start":
            raise RpcError(-32001, HOSTILE)
        return await super().handle(method, params)


serve(RefusesInEscapes)

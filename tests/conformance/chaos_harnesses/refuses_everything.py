"""Declares the harness capability but refuses every harness method with a
JSON-RPC error (a harness built without its agent loop). No scenario can be
played: each is an error (no verdict), never a pass or a failure."""

from __future__ import annotations

from typing import Any

from _chaos import HARNESS_METHODS, say, serve

from reqfold.reference.json_values import JsonObject
from reqfold.reference.shells.adapter import RpcError
from reqfold.reference.shells.harness_adapter import HarnessServer

NOT_READY = -32001


class RefusesEverything(HarnessServer):
    async def handle(self, method: str, params: JsonObject) -> Any:
        if method in HARNESS_METHODS:
            say(f"refusing {method}")
            raise RpcError(NOT_READY, f"{method}: the agent loop is not built in")
        return await super().handle(method, params)


serve(RefusesEverything)

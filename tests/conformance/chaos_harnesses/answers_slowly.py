"""Answers every harness request correctly but ``--delay`` seconds late
(default 10), far beyond a short --timeout: a harness that does a slow
start-up or network call inside the request instead of after answering.
The suite must stop waiting at --timeout and kill it, not wait the answer
out."""

from __future__ import annotations

import asyncio
from typing import Any

from _chaos import HARNESS_METHODS, option, say, serve

from reqfold.reference.json_values import JsonObject
from reqfold.reference.shells.harness_adapter import HarnessServer

DELAY = float(option("delay", "10"))


class AnswersSlowly(HarnessServer):
    async def handle(self, method: str, params: JsonObject) -> Any:
        if method in HARNESS_METHODS:
            say(f"answering {method} in {DELAY:g}s")
            await asyncio.sleep(DELAY)
        return await super().handle(method, params)


serve(AnswersSlowly)

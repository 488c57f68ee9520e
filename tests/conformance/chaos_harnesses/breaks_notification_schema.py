"""Sends notifications the protocol does not allow. By default its
``turn/ended`` has no ``reason`` (it breaks turn.ended.json); with
``--unknown`` it also sends a ``turn/progress`` notification, a method the
protocol does not define, when a turn starts. Both are protocol errors: the
suite cannot judge a turn whose end it cannot read."""

from __future__ import annotations

import sys
from typing import Any

from _chaos import say, serve

from reqfold.reference.shells.harness_adapter import HarnessServer, Instance

UNKNOWN = "--unknown" in sys.argv


class BreaksNotificationSchema(HarnessServer):
    async def run_turn(self, instance: Instance, prompt: str) -> None:
        if UNKNOWN:
            say("sending turn/progress")
            self.notify("turn/progress", {"instance": instance.name, "percent": 0})
        await super().run_turn(instance, prompt)

    def turn_ended(self, instance: Instance, turn: int | None, reason: Any) -> None:
        say("sending turn/ended without its reason")
        self.notify("turn/ended", {"instance": instance.name, "turn": turn})


serve(BreaksNotificationSchema)

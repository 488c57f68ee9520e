"""Caches a composition a cancel interrupted and sends its sentinel on the
next turn (the original harness's PREFIX-5 bug), then never ends that turn.
The hang must not hide the leak: the scenario is an error, and the sentinel
already captured is still a failure."""

from __future__ import annotations

from typing import Any

from _chaos import say, serve

from reqfold.reference.json_values import JsonObject
from reqfold.reference.loop import AbortSignal, AgentLoop
from reqfold.reference.shells.harness_adapter import HarnessServer, Instance


class CachesCancelledComposition(AgentLoop):
    async def compose_prefix(self, turn: int, signal: AbortSignal) -> list[JsonObject]:
        composed = await super().compose_prefix(turn, signal)
        self.adopt_prefix(composed)  # cached before the checkpoint
        return composed


class LeaksThenHangs(HarnessServer):
    def __init__(self, notify: Any, **options: Any) -> None:
        super().__init__(
            notify, **{**options, "loop_class": CachesCancelledComposition}
        )

    def turn_ended(self, instance: Instance, turn: int | None, reason: Any) -> None:
        if instance.loop.requests:  # the sentinel went out: never say the turn ended
            say(f"{instance.name} sent its cached prefix and now hangs")
            return
        super().turn_ended(instance, turn, reason)


serve(LeaksThenHangs)

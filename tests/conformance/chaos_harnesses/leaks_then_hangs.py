"""Caches a composition a cancel interrupted and sends its sentinel on the
next turn (the original harness's PREFIX-5 bug), then never ends that turn.
The hang must not hide the leak: the scenario is an error, and the sentinel
already captured is still a failure."""

from __future__ import annotations

from typing import Any

from _chaos import say, serve

from reqfold.reference.json_values import JsonObject
from reqfold.reference.loop import AbortSignal, AgentLoop, deep_freeze
from reqfold.reference.shells.harness_adapter import HarnessServer, Instance


class CachesCancelledComposition(AgentLoop):
    async def _compose_prefix(self, turn: int, signal: AbortSignal) -> list[JsonObject]:
        composed = await super()._compose_prefix(turn, signal)
        self._prefix = deep_freeze(composed)  # cached before the checkpoint
        return composed


class LeaksThenHangs(HarnessServer):
    def __init__(self, notify: Any, **options: Any) -> None:
        super().__init__(
            notify, **{**options, "loop_class": CachesCancelledComposition}
        )

    def _turn_ended(self, instance: Instance, turn: int | None, reason: Any) -> None:
        if instance.loop.requests:  # the sentinel went out: never say the turn ended
            say(f"{instance.name} sent its cached prefix and now hangs")
            return
        super()._turn_ended(instance, turn, reason)


serve(LeaksThenHangs)

"""Caches the composed prefix before checking for a cancel, so a composition a
cancel interrupted (the contributor's degraded sentinel) is sent on the next
turn: the original harness's PREFIX-5 bug. Caught by
``prefix-cancel-inside-composition``: ``absent/SENTINEL-DEGRADED-7f3a`` and
``calls/catalog@i1`` [PREFIX-5]."""

from reqfold.reference.json_values import JsonObject
from reqfold.reference.loop import AbortSignal, AgentLoop, deep_freeze
from reqfold.reference.shells.harness_adapter import main


class CachesCancelledComposition(AgentLoop):
    async def _compose_prefix(self, turn: int, signal: AbortSignal) -> list[JsonObject]:
        composed = await super()._compose_prefix(turn, signal)
        self._prefix = deep_freeze(composed)  # cached before the checkpoint
        return composed


raise SystemExit(main(loop_class=CachesCancelledComposition))

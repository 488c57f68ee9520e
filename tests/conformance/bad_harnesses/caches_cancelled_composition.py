"""Caches the composed prefix before checking for a cancel, so a composition a
cancel interrupted (the contributor's degraded sentinel) is sent on the next
turn: the original harness's PREFIX-5 bug."""

from reqfold.reference.json_values import JsonObject
from reqfold.reference.loop import AbortSignal, AgentLoop
from reqfold.reference.shells.harness_adapter import main


class CachesCancelledComposition(AgentLoop):
    async def compose_prefix(self, turn: int, signal: AbortSignal) -> list[JsonObject]:
        composed = await super().compose_prefix(turn, signal)
        self.adopt_prefix(composed)  # cached before the checkpoint
        return composed


raise SystemExit(main(loop_class=CachesCancelledComposition))

"""Composes the session prefix again at once when a composition was interrupted
("so the next turn is ready"), even when a dispose interrupted it and no
turn will follow."""

from reqfold.reference.json_values import JsonObject
from reqfold.reference.loop import AbortSignal, AgentLoop
from reqfold.reference.shells.harness_adapter import main


class RecomposesAfterAnInterruption(AgentLoop):
    async def compose_prefix(self, turn: int, signal: AbortSignal) -> list[JsonObject]:
        composed = await super().compose_prefix(turn, signal)
        if self.interruption() is not None:  # warm it up for the next turn
            await super().compose_prefix(turn, AbortSignal())
        return composed


raise SystemExit(main(loop_class=RecomposesAfterAnInterruption))

"""Marks the session prefix composed (an empty list) before the contributors
run, so a composition that throws leaves it cached and the next turn never
recomposes."""

from reqfold.reference.json_values import JsonObject
from reqfold.reference.loop import AbortSignal, AgentLoop
from reqfold.reference.shells.harness_adapter import main


class ThrowingCompositionStaysCached(AgentLoop):
    async def compose_prefix(self, turn: int, signal: AbortSignal) -> list[JsonObject]:
        self.adopt_prefix(())  # "composing": claimed before the listeners run
        return await super().compose_prefix(turn, signal)


raise SystemExit(main(loop_class=ThrowingCompositionStaysCached))

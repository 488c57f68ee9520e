"""Leaves out a contributor that throws ("one broken plugin must not stop the
session") and composes the prefix from the others, caching it: the turn goes
on and sends, and the contributor is never asked again."""

from reqfold.reference.json_values import JsonObject
from reqfold.reference.loop import AbortSignal, AgentLoop
from reqfold.reference.shells.harness_adapter import main


class SkipsAThrowingContributor(AgentLoop):
    async def compose_prefix(self, turn: int, signal: AbortSignal) -> list[JsonObject]:
        try:
            return await super().compose_prefix(turn, signal)
        except Exception:  # "carry on without it"
            return []


raise SystemExit(main(loop_class=SkipsAThrowingContributor))

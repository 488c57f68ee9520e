"""Leaves out a contributor that throws ("one broken plugin must not stop
the session") and composes the prefix from the others, caching it: the
turn goes on and sends, and the contributor is never asked again. Caught
by ``prefix-throwing-contributor``: ``send-1/end``, ``send-1/requests``,
``calls/catalog@i1`` and ``send-2/request-0`` [PREFIX-5]."""

from reqfold.reference.json_values import JsonObject
from reqfold.reference.loop import AbortSignal, AgentLoop
from reqfold.reference.shells.harness_adapter import main


class SkipsAThrowingContributor(AgentLoop):
    async def _compose_prefix(self, turn: int, signal: AbortSignal) -> list[JsonObject]:
        try:
            return await super()._compose_prefix(turn, signal)
        except Exception:  # "carry on without it"
            return []


raise SystemExit(main(loop_class=SkipsAThrowingContributor))

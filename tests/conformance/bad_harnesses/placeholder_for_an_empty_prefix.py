"""Puts a placeholder message where a composition yielded nothing, logged
and sent, where an empty composition is canonical absence (the request is
the bare history). Caught by ``prefix-empty-composition``: ``request-0``
does not open with the user's message [PREFIX-3], and by no other check."""

from reqfold.reference.json_values import JsonObject
from reqfold.reference.loop import AbortSignal, AgentLoop
from reqfold.reference.shells.harness_adapter import main

PLACEHOLDER: JsonObject = {
    "role": "user",
    "content": [{"type": "text", "text": "(no session context)"}],
}


class PlaceholderForAnEmptyPrefix(AgentLoop):
    async def _compose_prefix(self, turn: int, signal: AbortSignal) -> list[JsonObject]:
        composed = await super()._compose_prefix(turn, signal)
        return composed or [PLACEHOLDER]


raise SystemExit(main(loop_class=PlaceholderForAnEmptyPrefix))

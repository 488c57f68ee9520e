"""Puts a placeholder message where a composition yielded nothing, logged and
sent, where an empty composition is canonical absence (the request is the
bare history)."""

from reqfold.reference.json_values import JsonObject
from reqfold.reference.loop import AbortSignal, AgentLoop
from reqfold.reference.shells.harness_adapter import main

PLACEHOLDER: JsonObject = {
    "role": "user",
    "content": [{"type": "text", "text": "(no session context)"}],
}


class PlaceholderForAnEmptyPrefix(AgentLoop):
    async def compose_prefix(self, turn: int, signal: AbortSignal) -> list[JsonObject]:
        composed = await super().compose_prefix(turn, signal)
        return composed or [PLACEHOLDER]


raise SystemExit(main(loop_class=PlaceholderForAnEmptyPrefix))

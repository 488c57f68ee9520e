"""Saves every composition beside the session for the next process to reuse,
also one a dispose interrupted (the contributor's degraded sentinel), so the
resumed instance sends it instead of recomposing."""

from typing import Any

from reqfold.reference.json_values import JsonObject
from reqfold.reference.loop import AbortSignal, AgentLoop
from reqfold.reference.shells.harness_adapter import main

SAVED: dict[str, list[JsonObject]] = {}
"""Stands for a prefix file beside each session file, keyed by its path."""


class SavesDisposedComposition(AgentLoop):
    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        saved = SAVED.get(self.sink.path)
        if saved is not None:
            self.adopt_prefix(saved)  # "warm start"

    async def compose_prefix(self, turn: int, signal: AbortSignal) -> list[JsonObject]:
        composed = await super().compose_prefix(turn, signal)
        SAVED[self.sink.path] = composed  # saved before the checkpoint
        return composed


raise SystemExit(main(loop_class=SavesDisposedComposition))

"""Derives the step's history before composing the session prefix, so a
contributor's append, logged before the boundary, is missing from the
current request (and only joins the next one)."""

from typing import Any

from reqfold.reference.json_values import JsonObject
from reqfold.reference.loop import AbortSignal, AgentLoop
from reqfold.reference.shells.harness_adapter import main


class DerivesHistoryBeforeComposing(AgentLoop):
    early: list[JsonObject] | None = None

    def __init__(self, **options: Any) -> None:
        super().__init__(**options, check_requests=False)

    async def compose_prefix(self, turn: int, signal: AbortSignal) -> list[JsonObject]:
        self.early = self.session.derive_messages()
        return await super().compose_prefix(turn, signal)

    def cross_boundary(self, turn: int, step: int) -> tuple[list[JsonObject], int]:
        derived, boundary = super().cross_boundary(turn, step)
        if self.early is not None:
            derived, self.early = self.early, None
        return derived, boundary


raise SystemExit(main(loop_class=DerivesHistoryBeforeComposing))

"""Ends a turn whose composition a cancel interrupted ``completed`` ("nothing
was sent, so nothing went wrong"), where it must end ``aborted``; the
discard itself is right."""

from typing import Any

from reqfold.reference.json_values import JsonObject
from reqfold.reference.loop import AgentLoop, TurnInterrupted, TurnResult
from reqfold.reference.shells.harness_adapter import main


class CancelledCompositionEndsCompleted(AgentLoop):
    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.sent_before_turn = 0

    async def run_turn(
        self, content: list[JsonObject], source: JsonObject
    ) -> TurnResult:
        self.sent_before_turn = len(self.requests)
        return await super().run_turn(content, source)

    def checkpoint(self) -> None:
        reason = self.interruption()
        cancelled = reason is not None and reason["kind"] == "aborted"
        if cancelled and len(self.requests) == self.sent_before_turn:
            raise TurnInterrupted({"kind": "completed"})  # "nothing was sent"
        super().checkpoint()


raise SystemExit(main(loop_class=CancelledCompositionEndsCompleted))

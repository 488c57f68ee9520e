"""Ends a turn whose composition a cancel interrupted ``completed`` ("nothing
was sent, so nothing went wrong"), where it must end ``aborted``; the
discard itself is right. Caught by ``prefix-cancel-inside-composition``:
``send-1/end`` [PREFIX-5] only."""

from typing import Any

from reqfold.reference.json_values import JsonObject
from reqfold.reference.loop import AgentLoop, TurnResult
from reqfold.reference.loop.agent import _TurnEnd
from reqfold.reference.shells.harness_adapter import main


class CancelledCompositionEndsCompleted(AgentLoop):
    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.sent_before_turn = 0

    async def _run_turn(
        self, content: list[JsonObject], source: JsonObject
    ) -> TurnResult:
        self.sent_before_turn = len(self.requests)
        return await super()._run_turn(content, source)

    def _checkpoint(self) -> None:
        reason = self._interruption()
        cancelled = reason is not None and reason["kind"] == "aborted"
        if cancelled and len(self.requests) == self.sent_before_turn:
            raise _TurnEnd({"kind": "completed"})  # "nothing was sent"
        super()._checkpoint()


raise SystemExit(main(loop_class=CancelledCompositionEndsCompleted))

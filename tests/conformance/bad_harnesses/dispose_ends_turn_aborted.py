"""Disposes of an instance by cancelling its running turn and disposing once it
is idle, so a turn a dispose interrupts ends ``aborted`` instead of
``disposed``. Caught by ``prefix-dispose-inside-composition``: ``send-1/end``
[PREFIX-5]."""

from reqfold.reference.json_values import JsonObject
from reqfold.reference.loop import AgentLoop, TurnResult
from reqfold.reference.shells.harness_adapter import main


class DisposeEndsTurnAborted(AgentLoop):
    _dispose_when_idle = False

    def dispose(self) -> None:
        if self._state.running:
            self._dispose_when_idle = True
            self.cancel("disposed")
        else:
            super().dispose()

    async def _run_turn(
        self, content: list[JsonObject], source: JsonObject
    ) -> TurnResult:
        try:
            return await super()._run_turn(content, source)
        finally:
            if self._dispose_when_idle:
                super().dispose()


raise SystemExit(main(loop_class=DisposeEndsTurnAborted))

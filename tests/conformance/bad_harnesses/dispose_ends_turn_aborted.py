"""Disposes of an instance by cancelling its running turn and disposing once it
is idle, so a turn a dispose interrupts ends ``aborted`` instead of
``disposed``."""

from reqfold.reference.json_values import JsonObject
from reqfold.reference.loop import AgentLoop, TurnResult
from reqfold.reference.shells.harness_adapter import main


class DisposeEndsTurnAborted(AgentLoop):
    dispose_when_idle = False

    def dispose(self) -> None:
        if self.running:
            self.dispose_when_idle = True
            self.cancel("disposed")
        else:
            super().dispose()

    async def run_turn(
        self, content: list[JsonObject], source: JsonObject
    ) -> TurnResult:
        try:
            return await super().run_turn(content, source)
        finally:
            if self.dispose_when_idle:
                super().dispose()


raise SystemExit(main(loop_class=DisposeEndsTurnAborted))

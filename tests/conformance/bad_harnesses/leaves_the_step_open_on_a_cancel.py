"""Ends a turn cancelled or disposed while its request is in flight, or while a
tool runs, at once, with ``turn/end``, leaving the step it had opened
without its ``step/end``."""

from reqfold.reference.json_values import JsonObject
from reqfold.reference.loop import AgentLoop
from reqfold.reference.shells.harness_adapter import main


class LeavesTheStepOpenOnACancel(AgentLoop):
    def close_step(self) -> None:
        if self.interruption() is None:  # interrupted: the turn ends now
            super().close_step()

    def ends_open_step(self, reason: JsonObject) -> bool:
        return reason.get("kind") not in ("aborted", "disposed")


raise SystemExit(main(loop_class=LeavesTheStepOpenOnACancel))

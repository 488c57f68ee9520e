"""Ends a turn cancelled or disposed while its request is in flight, or while
a tool runs, at once, with ``turn/end``, leaving the step it had opened
without its ``step/end``. Caught by ``cancel-mid-request``:
``log/TURN-2`` [TURN-2]; and so by ``cancel-mid-request-after-a-tool``,
``dispose-mid-request``, ``cancel-mid-tool`` and ``dispose-mid-tool``. No
scenario landed a cancel after a step had started before them."""

from dataclasses import replace

from reqfold.reference.json_values import JsonObject
from reqfold.reference.loop import AgentLoop
from reqfold.reference.shells.harness_adapter import main


class LeavesTheStepOpenOnACancel(AgentLoop):
    def _close_step(self) -> None:
        if self._interruption() is None:  # interrupted: the turn ends now
            super()._close_step()

    def _finish_turn(self, turn: int, reason: JsonObject) -> Exception | None:
        interrupted = reason.get("kind") in ("aborted", "disposed")
        if not interrupted or self._log.turns.open_step is None:
            return super()._finish_turn(turn, reason)
        event = self._log.commit("turn/end", {"turn": turn, "reason": reason})
        self._state = replace(self._state, stranded=None)
        return self._log.notify_quietly(event)


raise SystemExit(main(loop_class=LeavesTheStepOpenOnACancel))

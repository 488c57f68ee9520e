"""Ends a turn ``error`` whenever a listener throws, even one honouring a
cancel by throwing, where the turn must end ``aborted``; the composition is
still discarded."""

from reqfold.reference.json_values import JsonObject
from reqfold.reference.loop import AgentLoop
from reqfold.reference.shells.harness_adapter import main


class CancelByThrowingEndsError(AgentLoop):
    def failure_reason(self, failure: BaseException, step: int) -> JsonObject:
        message = str(failure) or type(failure).__name__
        return {"kind": "error", "step": step, "message": message}


raise SystemExit(main(loop_class=CancelByThrowingEndsError))

"""Ends a turn ``error`` whenever a listener throws, even one honouring a cancel
by throwing, where the turn must end ``aborted``; the composition is still
discarded. Caught by ``prefix-cancel-honoured-by-throwing``: ``send-1/end``
[PREFIX-5], and by no other check."""

from reqfold.reference.json_values import JsonObject
from reqfold.reference.loop import AgentLoop
from reqfold.reference.shells.harness_adapter import main


class CancelByThrowingEndsError(AgentLoop):
    def _failure_reason(self, failure: BaseException, step: int) -> JsonObject:
        message = str(failure) or type(failure).__name__
        return {"kind": "error", "step": step, "message": message}


raise SystemExit(main(loop_class=CancelByThrowingEndsError))

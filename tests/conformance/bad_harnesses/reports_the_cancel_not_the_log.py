"""Ends a turn ``error`` when a listener throws, even one honouring a cancel
(as ``cancel_by_throwing_ends_error``), but its adapter reports what it
asked for: a turn it cancelled is ``aborted`` in ``turn/ended`` whatever the
log says."""

from typing import Any

from reqfold.reference.json_values import JsonObject
from reqfold.reference.loop import AgentLoop
from reqfold.reference.shells.harness_adapter import HarnessServer, Instance, main


class CancelByThrowingEndsError(AgentLoop):
    def failure_reason(self, failure: BaseException, step: int) -> JsonObject:
        message = str(failure) or type(failure).__name__
        return {"kind": "error", "step": step, "message": message}


class ReportsTheCancel(HarnessServer):
    def __init__(self, notify: Any, **options: Any) -> None:
        super().__init__(notify, **options)
        self.cancelled: dict[str, str] = {}

    async def cancel(self, params: JsonObject) -> JsonObject:
        self.cancelled[params["instance"]] = params.get("reason") or "cancelled"
        return await super().cancel(params)

    def turn_ended(self, instance: Instance, turn: int | None, reason: Any) -> None:
        asked = self.cancelled.pop(instance.name, None)
        if asked is not None:  # "we cancelled it, so it was aborted"
            reason = {"kind": "aborted", "reason": asked}
        super().turn_ended(instance, turn, reason)


raise SystemExit(
    main(server_class=ReportsTheCancel, loop_class=CancelByThrowingEndsError)
)

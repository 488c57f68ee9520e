"""The writer names every instance's first snapshot ``initial``, also on a
resumed instance whose log already has a header."""

from reqfold.reference.header import Header
from reqfold.reference.json_values import JsonObject
from reqfold.reference.loop import AgentLoop
from reqfold.reference.shells.harness_adapter import main


class LogsInitialOnResume(AgentLoop):
    def owed_header_event(
        self, baseline: Header | None, assembled: Header
    ) -> JsonObject | None:
        event = super().owed_header_event(baseline, assembled)
        if event is not None and event["data"].get("reason") == "resume":
            event["data"]["reason"] = "initial"
        return event


raise SystemExit(main(loop_class=LogsInitialOnResume))

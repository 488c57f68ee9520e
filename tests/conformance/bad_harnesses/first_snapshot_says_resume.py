"""The writer names an instance's first snapshot ``resume`` even in a new
session, where no header event came before it and it must say ``initial``."""

from reqfold.reference.header import Header
from reqfold.reference.json_values import JsonObject
from reqfold.reference.loop import AgentLoop
from reqfold.reference.shells.harness_adapter import main


class FirstSnapshotSaysResume(AgentLoop):
    def owed_header_event(
        self, baseline: Header | None, assembled: Header
    ) -> JsonObject | None:
        event = super().owed_header_event(baseline, assembled)
        if event is not None and event["data"].get("reason") == "initial":
            event["data"]["reason"] = "resume"
        return event


raise SystemExit(main(loop_class=FirstSnapshotSaysResume))

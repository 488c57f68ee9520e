"""The writer logs a change no delta can say (a pure tool reorder) as the delta
``diff`` yields instead of a ``fallback`` snapshot; the log (and the request
built from it) keeps the old order."""

from reqfold.reference.header import DELTA, Header, diff_header
from reqfold.reference.json_values import JsonObject
from reqfold.reference.loop import AgentLoop
from reqfold.reference.shells.harness_adapter import main


class ToolReorderAsDelta(AgentLoop):
    def owed_header_event(
        self, baseline: Header | None, assembled: Header
    ) -> JsonObject | None:
        event = super().owed_header_event(baseline, assembled)
        fallback = event is not None and event["data"].get("reason") == "fallback"
        if fallback and baseline is not None:
            delta = diff_header(baseline, assembled, self.revision)
            return {"type": DELTA, "data": delta}
        return event


raise SystemExit(main(loop_class=ToolReorderAsDelta))

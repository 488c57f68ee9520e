"""The writer asks "did the header change?" before "is this the instance's first
request?", so a resumed instance whose header is unchanged logs no ``resume``
snapshot (WRITER-1). The log alone does not show where an instance starts,
so only the suite's own record of where each instance started shows it."""

from reqfold.reference.header import Header, header_equals
from reqfold.reference.json_values import JsonObject
from reqfold.reference.loop import AgentLoop
from reqfold.reference.shells.harness_adapter import main


class ResumeSkipsUnchangedSnapshot(AgentLoop):
    def owed_header_event(
        self, baseline: Header | None, assembled: Header
    ) -> JsonObject | None:
        if baseline is not None and header_equals(baseline, assembled, self.revision):
            return None
        return super().owed_header_event(baseline, assembled)


raise SystemExit(main(loop_class=ResumeSkipsUnchangedSnapshot))

"""A resumed instance takes its session prefix from the log's last snapshot
instead of recomposing it, so drift in the contributors never reaches the
model."""

from typing import Any

from reqfold.reference.loop import AgentLoop
from reqfold.reference.shells.harness_adapter import main


class ResumeReusesLoggedPrefix(AgentLoop):
    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        header = self.session.request_header()
        if header is not None and "messagePrefix" in header:
            self.adopt_prefix(header["messagePrefix"])  # "already composed"


raise SystemExit(main(loop_class=ResumeReusesLoggedPrefix))

"""A resumed instance's writer carries on from the log as if it had logged the
header itself, so the prefix a resumed instance recomposes goes out as a
delta with a ``messagePrefix`` arm instead of on a ``resume`` snapshot."""

from typing import Any

from reqfold.reference.loop import AgentLoop
from reqfold.reference.shells.harness_adapter import main


class WriterStateSurvivesResume(AgentLoop):
    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.logged_header = self.session.request_header() is not None


raise SystemExit(main(loop_class=WriterStateSurvivesResume))

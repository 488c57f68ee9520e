"""Takes a session that already holds a header (seeded, or resumed) as
composed: the prefix is the logged header's ``messagePrefix``, or none, and
the contributors are never called."""

from typing import Any

from reqfold.reference.loop import AgentLoop
from reqfold.reference.shells.harness_adapter import main


class SeededSessionSkipsComposition(AgentLoop):
    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        header = self.session.request_header()
        if header is not None:  # "this session was composed already"
            self.adopt_prefix(header.get("messagePrefix", []))


raise SystemExit(main(loop_class=SeededSessionSkipsComposition))

"""Takes a session that already holds a header (seeded, or resumed) as
composed: the prefix is the logged header's ``messagePrefix``, or none, and
the contributors are never called. Caught by ``seeded-session-continues``:
``calls/rules@i1`` [PREFIX-6] and ``request-0`` [REQ-1]."""

from typing import Any

from reqfold.reference.loop import AgentLoop, deep_freeze
from reqfold.reference.shells.harness_adapter import main


class SeededSessionSkipsComposition(AgentLoop):
    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        header = self.session.request_header()
        if header is not None:  # "this session was composed already"
            self._prefix = deep_freeze(header.get("messagePrefix", []))


raise SystemExit(main(loop_class=SeededSessionSkipsComposition))

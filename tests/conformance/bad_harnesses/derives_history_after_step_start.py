"""Derives the step's history after appending ``step/start`` (after its
listeners ran), so an event a ``step/start`` listener appends joins the
current request instead of the next one."""

from typing import Any

from reqfold.reference.json_values import JsonObject
from reqfold.reference.loop import AgentLoop
from reqfold.reference.shells.harness_adapter import main


class DerivesHistoryAfterStepStart(AgentLoop):
    def __init__(self, **options: Any) -> None:
        super().__init__(**options, check_requests=False)

    def cross_boundary(self, turn: int, step: int) -> tuple[list[JsonObject], int]:
        _, boundary = super().cross_boundary(turn, step)
        return self.session.derive_messages(), boundary


raise SystemExit(main(loop_class=DerivesHistoryAfterStepStart))

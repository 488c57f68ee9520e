"""Retries a step whose composition failed, once, and forgets the cancel that
made it fail ("the contributor threw; try again"): a contributor that
honours a cancel by throwing is called again and the turn sends its request
anyway."""

import asyncio
from typing import Any

from reqfold.reference.json_values import JsonObject
from reqfold.reference.loop import AgentLoop
from reqfold.reference.shells.harness_adapter import main


class ThrowClearsTheCancel(AgentLoop):
    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.retried = False

    async def run_step(self, turn: int, step: int) -> JsonObject | None:
        try:
            return await super().run_step(turn, step)
        except (Exception, asyncio.CancelledError):
            if self.session_prefix is not None or self.retried:
                raise
            self.retried = True  # "the contributor threw: compose again"
            self.forget_interruption()
            return await super().run_step(turn, step)


raise SystemExit(main(loop_class=ThrowClearsTheCancel))

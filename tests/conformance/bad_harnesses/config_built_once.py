"""Builds the request config (model and sampling) at an instance's first step
and reuses it, so a model change made between turns never reaches a request
(nor the log)."""

from reqfold.reference.json_values import JsonObject
from reqfold.reference.loop import AbortSignal, AgentLoop
from reqfold.reference.shells.harness_adapter import main


class ConfigBuiltOnce(AgentLoop):
    config_of_first_request: JsonObject | None = None

    async def request_config(
        self, turn: int, step: int, signal: AbortSignal
    ) -> JsonObject:
        if self.config_of_first_request is None:
            self.config_of_first_request = await super().request_config(
                turn, step, signal
            )
        return self.config_of_first_request


raise SystemExit(main(loop_class=ConfigBuiltOnce))

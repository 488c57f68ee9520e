"""Builds the request config (model and sampling) at an instance's first
step and reuses it, so a model change made between turns never reaches a
request (nor the log). Caught by ``model-change-between-turns``:
``request-1`` [REQ-6, WIRE-1]."""

from reqfold.reference.json_values import JsonObject
from reqfold.reference.loop import AbortSignal, AgentLoop
from reqfold.reference.shells.harness_adapter import main


class ConfigBuiltOnce(AgentLoop):
    _config: JsonObject | None = None

    async def _request_config(
        self, turn: int, step: int, signal: AbortSignal
    ) -> JsonObject:
        if self._config is None:
            self._config = await super()._request_config(turn, step, signal)
        return self._config


raise SystemExit(main(loop_class=ConfigBuiltOnce))

"""Builds the system prompt, the tool list and the request config at an
instance's first step and reuses them, so a change made between turns never
reaches a request (nor the log, which stays consistent with what was sent).
Caught by the request checks of ``system-change-between-turns``,
``tool-added-between-turns``, ``tool-removed-between-turns``,
``tool-inserted-in-the-middle`` and ``model-change-between-turns``:
``request-1`` [REQ-2, REQ-6, WIRE-1]."""

from reference.harness_adapter import main
from reference.json_values import JsonObject
from reference.loop import AbortSignal, AgentLoop


class OpeningBuiltOnce(AgentLoop):
    _assembly: tuple[str, list[JsonObject]] | None = None
    _config: JsonObject | None = None

    async def _assemble(self, turn: int, step: int) -> tuple[str, list[JsonObject]]:
        if self._assembly is None:
            self._assembly = await super()._assemble(turn, step)
        return self._assembly

    async def _request_config(
        self, turn: int, step: int, signal: AbortSignal
    ) -> JsonObject:
        if self._config is None:
            self._config = await super()._request_config(turn, step, signal)
        return self._config


raise SystemExit(main(loop_class=OpeningBuiltOnce))

"""Assembles the system prompt and the tool list at an instance's first step
and reuses them, so a change made between turns never reaches a request
(nor the log, which stays consistent with what was sent). Caught by the
request checks of ``system-change-between-turns``,
``tool-added-between-turns``, ``tool-removed-between-turns`` and
``tool-inserted-in-the-middle``: ``request-1`` [REQ-2, REQ-6]."""

from reqfold.reference.json_values import JsonObject
from reqfold.reference.loop import AgentLoop
from reqfold.reference.shells.harness_adapter import main


class AssemblyBuiltOnce(AgentLoop):
    _assembly: tuple[str, list[JsonObject]] | None = None

    async def _assemble(self, turn: int, step: int) -> tuple[str, list[JsonObject]]:
        if self._assembly is None:
            self._assembly = await super()._assemble(turn, step)
        return self._assembly


raise SystemExit(main(loop_class=AssemblyBuiltOnce))

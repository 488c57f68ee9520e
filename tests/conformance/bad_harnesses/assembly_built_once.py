"""Assembles the system prompt and the tool list at an instance's first step
and reuses them, so a change made between turns never reaches a request (nor
the log, which stays consistent with what was sent)."""

from reqfold.reference.json_values import JsonObject
from reqfold.reference.loop import AgentLoop
from reqfold.reference.shells.harness_adapter import main


class AssemblyBuiltOnce(AgentLoop):
    assembly: tuple[str, list[JsonObject]] | None = None

    async def assemble(self, turn: int, step: int) -> tuple[str, list[JsonObject]]:
        if self.assembly is None:
            self.assembly = await super().assemble(turn, step)
        return self.assembly


raise SystemExit(main(loop_class=AssemblyBuiltOnce))

"""Recomposes the session prefix at the start of every turn instead of once per
instance."""

from reqfold.reference.json_values import JsonObject
from reqfold.reference.loop import AgentLoop, TurnResult
from reqfold.reference.shells.harness_adapter import main


class RecomposesEveryTurn(AgentLoop):
    async def run_turn(
        self, content: list[JsonObject], source: JsonObject
    ) -> TurnResult:
        self.forget_prefix()  # "fresh context for every turn"
        return await super().run_turn(content, source)


raise SystemExit(main(loop_class=RecomposesEveryTurn))

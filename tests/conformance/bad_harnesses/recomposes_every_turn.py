"""Recomposes the session prefix at the start of every turn instead of once per
instance. Caught by ``prefix-composed-once``: ``calls/rules@i1`` and
``calls/skills@i1`` [PREFIX-1]; by ``prefix-append-while-composing``:
``calls/notes@i1``; by ``resume-without-drift``: ``calls/rules@i1``; by
``prefix-empty-composition``: ``calls/nothing@i1``; and by
``prefix-release-after-blocking``: ``calls/catalog@i1``."""

from reqfold.reference.json_values import JsonObject
from reqfold.reference.loop import AgentLoop, TurnResult
from reqfold.reference.shells.harness_adapter import main


class RecomposesEveryTurn(AgentLoop):
    async def _run_turn(
        self, content: list[JsonObject], source: JsonObject
    ) -> TurnResult:
        self._prefix = None  # "fresh context for every turn"
        return await super()._run_turn(content, source)


raise SystemExit(main(loop_class=RecomposesEveryTurn))

"""The reference harness that lists ``compact`` in ``initialize``'s
``features``, composes the session prefix again on every turn (a PREFIX-1
breach, proven by the second ``contributor/started``), and then answers
``instance/compact`` as "not supported" (-32003). Refusing a declared
feature part way must not dodge the scenario: the run is an *error*, and
``calls/rules@i1``, already exceeded, still fails beside it."""

from typing import Any

from reqfold.reference.json_values import JsonObject
from reqfold.reference.loop import AgentLoop, TurnResult
from reqfold.reference.shells.adapter import RpcError
from reqfold.reference.shells.harness_adapter import FEATURES, HarnessServer, main

NOT_SUPPORTED = -32003


class RecomposesEveryTurn(AgentLoop):
    async def run_turn(
        self, content: list[JsonObject], source: JsonObject
    ) -> TurnResult:
        self.forget_prefix()  # "fresh context for every turn"
        return await super().run_turn(content, source)


class RefusesDeclaredCompaction(HarnessServer):
    async def handle(self, method: str, params: JsonObject) -> Any:
        if method == "instance/compact":
            raise RpcError(NOT_SUPPORTED, "not today")
        result = await super().handle(method, params)
        if method == "initialize":
            result["features"] = list(FEATURES)
        return result


raise SystemExit(
    main(loop_class=RecomposesEveryTurn, server_class=RefusesDeclaredCompaction)
)

"""Composes the session prefix again on every turn (a PREFIX-1 breach that a
second ``contributor/started`` proves as soon as it comes), then never ends
that turn. The hang must not hide the proven breach: the scenario is an
error, and the call count already exceeded is still a failure."""

from __future__ import annotations

from typing import Any

from _chaos import say, serve

from reqfold.reference.json_values import JsonObject
from reqfold.reference.loop import AgentLoop, TurnResult
from reqfold.reference.shells.harness_adapter import HarnessServer, Instance


class RecomposesEveryTurn(AgentLoop):
    async def run_turn(
        self, content: list[JsonObject], source: JsonObject
    ) -> TurnResult:
        self.forget_prefix()  # "fresh context for every turn"
        return await super().run_turn(content, source)


class RecomposesThenHangs(HarnessServer):
    def __init__(self, notify: Any, **options: Any) -> None:
        super().__init__(notify, **{**options, "loop_class": RecomposesEveryTurn})

    def turn_ended(self, instance: Instance, turn: int | None, reason: Any) -> None:
        if turn is not None and turn >= 2:  # composed twice: never say it ended
            say(f"{instance.name} composed again and now hangs")
            return
        super().turn_ended(instance, turn, reason)


serve(RecomposesThenHangs)

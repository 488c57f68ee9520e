"""Composes the session prefix while building the first request, after the
request-config waterfall, instead of before the first pre-step: a
contributor's append lands after the boundary and joins the next request."""

from collections.abc import Sequence

from reqfold.reference.header import Header
from reqfold.reference.json_values import JsonObject
from reqfold.reference.loop import AbortSignal, AgentLoop, Framing
from reqfold.reference.loop.freeze import FrozenObject
from reqfold.reference.shells.harness_adapter import main


class ComposesAfterTheBoundary(AgentLoop):
    deferred: tuple[int, AbortSignal] | None = None

    async def compose_prefix(self, turn: int, signal: AbortSignal) -> list[JsonObject]:
        self.deferred = (turn, signal)  # "composed lazily, when the request needs it"
        return []

    async def request_config(
        self, turn: int, step: int, signal: AbortSignal
    ) -> JsonObject:
        config = await super().request_config(turn, step, signal)
        if self.deferred is not None:
            composed = await super().compose_prefix(*self.deferred)
            self.deferred = None
            self.checkpoint()
            self.adopt_prefix(composed)
        return config

    def build_header(
        self,
        config: JsonObject,
        system: str,
        tools: list[JsonObject],
        prefix: Sequence[FrozenObject],
        framing: Framing,
    ) -> Header:
        return super().build_header(
            config, system, tools, self.session_prefix or (), framing
        )


raise SystemExit(main(loop_class=ComposesAfterTheBoundary))

"""Composes the session prefix while building the first request, after the
request-config waterfall, instead of before the first pre-step: a
contributor's append lands after the boundary and joins the next request.
Caught by ``prefix-append-while-composing``: ``request-0`` [PREFIX-4].
Composing inside the step also leaves a turn whose composition a cancel or
dispose interrupted holding an opened step: ``send-1/steps`` [PREFIX-5] of
``prefix-cancel-inside-composition``, ``prefix-cancel-honoured-by-throwing``,
``prefix-dispose-inside-composition`` and ``prefix-throwing-contributor``."""

from collections.abc import Sequence

from reqfold.reference.header import Header
from reqfold.reference.json_values import JsonObject
from reqfold.reference.loop import AbortSignal, AgentLoop, Framing, deep_freeze
from reqfold.reference.loop.freeze import FrozenObject
from reqfold.reference.shells.harness_adapter import main


class ComposesAfterTheBoundary(AgentLoop):
    _deferred: tuple[int, AbortSignal] | None = None

    async def _compose_prefix(self, turn: int, signal: AbortSignal) -> list[JsonObject]:
        self._deferred = (turn, signal)  # "composed lazily, when the request needs it"
        return []

    async def _request_config(
        self, turn: int, step: int, signal: AbortSignal
    ) -> JsonObject:
        config = await super()._request_config(turn, step, signal)
        if self._deferred is not None:
            composed = await super()._compose_prefix(*self._deferred)
            self._deferred = None
            self._checkpoint()
            self._prefix = deep_freeze(composed)
        return config

    def _header(
        self,
        config: JsonObject,
        system: str,
        tools: list[JsonObject],
        prefix: Sequence[FrozenObject],
        framing: Framing,
    ) -> Header:
        return super()._header(config, system, tools, self._prefix or (), framing)


raise SystemExit(main(loop_class=ComposesAfterTheBoundary))

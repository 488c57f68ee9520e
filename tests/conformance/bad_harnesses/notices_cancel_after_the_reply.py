"""Looks for a cancel or dispose only once the provider has answered, so a
composition one interrupted is cached and sent anyway (an earlier design of
the original harness noticed a cancel only while streaming). Caught by
``prefix-cancel-inside-composition``: ``send-1/requests`` [PREFIX-5], the
degraded sentinel in what was sent and cached, and the contributor never
called again; and by ``prefix-dispose-inside-composition``:
``send-1/requests`` and the sentinel [PREFIX-5]."""

from reqfold.reference.json_values import JsonObject
from reqfold.reference.loop import AbortSignal, AgentLoop
from reqfold.reference.loop.client import ProviderReply
from reqfold.reference.loop.frozen_request import FrozenRequest
from reqfold.reference.shells.harness_adapter import main


class NoticesCancelAfterTheReply(AgentLoop):
    _listening = True

    async def _assemble(self, turn: int, step: int) -> tuple[str, list[JsonObject]]:
        self._listening = False  # deaf from the step's start ...
        return await super()._assemble(turn, step)

    def _checkpoint(self) -> None:
        if self._listening:
            super()._checkpoint()

    async def _dispatch(
        self, request: FrozenRequest, signal: AbortSignal, failure: Exception | None
    ) -> ProviderReply:
        reply = await super()._dispatch(request, AbortSignal(), failure)
        self._listening = True  # ... until the provider has answered
        self._checkpoint()
        return reply


raise SystemExit(main(loop_class=NoticesCancelAfterTheReply))

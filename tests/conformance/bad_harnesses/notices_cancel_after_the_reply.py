"""Looks for a cancel or dispose only once the provider has answered, so a
composition one interrupted is cached and sent anyway (an earlier design of
the original harness noticed a cancel only while streaming)."""

from reqfold.reference.json_values import JsonObject
from reqfold.reference.loop import AbortSignal, AgentLoop
from reqfold.reference.loop.client import ProviderReply
from reqfold.reference.loop.frozen_request import FrozenRequest
from reqfold.reference.shells.harness_adapter import main


class NoticesCancelAfterTheReply(AgentLoop):
    listening = True

    async def assemble(self, turn: int, step: int) -> tuple[str, list[JsonObject]]:
        self.listening = False  # deaf from the step's start ...
        return await super().assemble(turn, step)

    def checkpoint(self) -> None:
        if self.listening:
            super().checkpoint()

    async def dispatch_request(
        self, request: FrozenRequest, signal: AbortSignal, failure: Exception | None
    ) -> ProviderReply:
        reply = await super().dispatch_request(request, AbortSignal(), failure)
        self.listening = True  # ... until the provider has answered
        self.checkpoint()
        return reply


raise SystemExit(main(loop_class=NoticesCancelAfterTheReply))

"""A resumed instance opens its first request with a "session resumed" note, on
the wire only, so that request neither rebuilds from the log nor extends the
previous instance's last one."""

import dataclasses

from reqfold.reference.json_values import JsonObject
from reqfold.reference.loop import AbortSignal, AgentLoop, FrozenRequest, deep_freeze
from reqfold.reference.loop.client import ProviderReply
from reqfold.reference.shells.harness_adapter import main

NOTE = {
    "role": "user",
    "content": [{"type": "text", "text": "(session resumed)"}],
}


class NotesAResumeOnTheWire(AgentLoop):
    resumed: bool | None = None

    async def assemble(self, turn: int, step: int) -> tuple[str, list[JsonObject]]:
        if self.resumed is None:  # this instance's first step
            self.resumed = self.session.request_header() is not None
        return await super().assemble(turn, step)

    async def dispatch_request(
        self, request: FrozenRequest, signal: AbortSignal, failure: Exception | None
    ) -> ProviderReply:
        if self.resumed:
            self.resumed = False
            messages = (deep_freeze(NOTE), *request.messages)
            request = dataclasses.replace(request, messages=messages)
        return await super().dispatch_request(request, signal, failure)


raise SystemExit(main(loop_class=NotesAResumeOnTheWire))

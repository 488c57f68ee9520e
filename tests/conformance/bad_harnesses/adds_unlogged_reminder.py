"""Appends a reminder message to every request on the wire only, never logging
it, so no request can be rebuilt from the log."""

import dataclasses

from reqfold.reference.loop import AbortSignal, AgentLoop, FrozenRequest, deep_freeze
from reqfold.reference.loop.client import ProviderReply
from reqfold.reference.shells.harness_adapter import main

REMINDER = {
    "role": "user",
    "content": [{"type": "text", "text": "Reminder: answer in one sentence."}],
}


class AddsUnloggedReminder(AgentLoop):
    async def dispatch_request(
        self, request: FrozenRequest, signal: AbortSignal, failure: Exception | None
    ) -> ProviderReply:
        messages = (*request.messages, deep_freeze(REMINDER))
        wired = dataclasses.replace(request, messages=messages)
        return await super().dispatch_request(wired, signal, failure)


raise SystemExit(main(loop_class=AddsUnloggedReminder))

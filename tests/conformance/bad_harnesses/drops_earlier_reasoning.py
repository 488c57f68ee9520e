"""Drops the reasoning of assistant messages from earlier turns on the wire (as
some provider docs suggest), without logging a replace: the history is
rewritten once a turn ends, and the provider's cache misses."""

import dataclasses

from reqfold.reference.loop import (
    AbortSignal,
    AgentLoop,
    FrozenRequest,
    deep_freeze,
    thaw,
)
from reqfold.reference.loop.client import ProviderReply
from reqfold.reference.shells.harness_adapter import main


class DropsEarlierReasoning(AgentLoop):
    async def dispatch_request(
        self, request: FrozenRequest, signal: AbortSignal, failure: Exception | None
    ) -> ProviderReply:
        messages = thaw(request.messages)
        prompts = [n for n, m in enumerate(messages) if m["role"] == "user"]
        # A user prompt, not a tool result, opens the current turn.
        current = max(
            (n for n in prompts if messages[n]["content"][0].get("type") == "text"),
            default=0,
        )
        for message in messages[:current]:
            if message["role"] == "assistant":
                message["content"] = [
                    b for b in message["content"] if b.get("type") != "reasoning"
                ]
        wired = dataclasses.replace(request, messages=deep_freeze(messages))
        return await super().dispatch_request(wired, signal, failure)


raise SystemExit(main(loop_class=DropsEarlierReasoning))

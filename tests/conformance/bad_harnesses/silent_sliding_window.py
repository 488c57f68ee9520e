"""Keeps only the last two user prompts (and what followed them) on the wire,
to fit a context window, without logging a replace: earlier history is
rewritten on every request, and the provider's cache misses."""

import dataclasses

from reqfold.reference.loop import AbortSignal, AgentLoop, FrozenRequest
from reqfold.reference.loop.client import ProviderReply
from reqfold.reference.shells.harness_adapter import main

KEEP_PROMPTS = 2


class SilentSlidingWindow(AgentLoop):
    async def dispatch_request(
        self, request: FrozenRequest, signal: AbortSignal, failure: Exception | None
    ) -> ProviderReply:
        messages = request.messages
        prompts = [
            n
            for n, m in enumerate(messages)
            if m["role"] == "user" and m["content"][0]["type"] == "text"
        ]
        if len(prompts) > KEEP_PROMPTS:
            messages = messages[prompts[-KEEP_PROMPTS] :]
        wired = dataclasses.replace(request, messages=messages)
        return await super().dispatch_request(wired, signal, failure)


raise SystemExit(main(loop_class=SilentSlidingWindow))

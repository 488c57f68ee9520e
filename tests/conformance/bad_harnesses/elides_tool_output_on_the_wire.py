"""Replaces every tool result's output with a placeholder on the wire only (to
save tokens), never in the log, so the model never sees what a tool returned
and no request with a tool result rebuilds from the log."""

import dataclasses
from typing import Any

from reqfold.reference.loop import (
    AbortSignal,
    AgentLoop,
    FrozenRequest,
    deep_freeze,
    thaw,
)
from reqfold.reference.loop.client import ProviderReply
from reqfold.reference.shells.harness_adapter import main

ELIDED = [{"type": "text", "text": "[tool output elided]"}]


def elided(message: Any) -> Any:
    blocks = message.get("content")
    if not isinstance(blocks, list):
        return message
    return {
        **message,
        "content": [
            {**block, "content": ELIDED}
            if isinstance(block, dict) and block.get("type") == "tool-result"
            else block
            for block in blocks
        ],
    }


class ElidesToolOutputOnTheWire(AgentLoop):
    async def dispatch_request(
        self, request: FrozenRequest, signal: AbortSignal, failure: Exception | None
    ) -> ProviderReply:
        messages = tuple(deep_freeze(elided(thaw(m))) for m in request.messages)
        wired = dataclasses.replace(request, messages=messages)
        return await super().dispatch_request(wired, signal, failure)


raise SystemExit(main(loop_class=ElidesToolOutputOnTheWire))

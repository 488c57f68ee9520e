"""A tiny harness in process for the cache judgement's tests.

It talks to the fake provider through its httpx transport (no socket): a
system prompt with a date in it, three tools, and a conversation it
extends turn by turn unless a test changes something on purpose.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx

from reqfold.fakes import FakeProvider, FakeTransport, dump_capture_jsonl

SYSTEM = (
    "You are a careful coding agent.\n"
    + "".join(f"Rule {n}: read before you write.\n" for n in range(40))
    + "Current date: 2026-12-06\nAnswer briefly."
)
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": f"{name} a file " * 20,
            "parameters": {"type": "object", "properties": {}},
        },
    }
    for name in ("read", "write", "bash")
]


class Session:
    """A tiny harness in process: it talks to the fake through its transport."""

    def __init__(self) -> None:
        self.provider = FakeProvider("deepseek")
        self.client = httpx.Client(
            transport=FakeTransport(self.provider), base_url="http://fake"
        )
        self.system = SYSTEM
        self.tools: list[Any] = list(TOOLS)
        self.messages: list[Any] = []
        self.model = "deepseek-chat"

    def send(self, messages: list[Any] | None = None, **body: Any) -> Any:
        request = {
            "model": self.model,
            "messages": [{"role": "system", "content": self.system}]
            + (self.messages if messages is None else messages),
            "tools": self.tools,
            **body,
        }
        reply = self.client.post("/chat/completions", json=request).json()
        return reply["choices"][0]["message"]

    def turn(self, text: str) -> None:
        self.messages.append({"role": "user", "content": f"{text} " + "word " * 60})
        answer = self.send()
        self.messages.append({"role": "assistant", "content": answer["content"]})

    def lines(self) -> Iterator[str]:
        return iter(dump_capture_jsonl(self.provider.capture).splitlines())

    def reported(self, index: int) -> tuple[int, int]:
        usage = self.provider.capture.by_index(index)
        assert usage is not None
        assert usage.usage is not None
        return usage.usage["prompt_tokens"], usage.usage["prompt_cache_hit_tokens"]

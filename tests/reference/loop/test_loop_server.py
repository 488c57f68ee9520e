"""The loop against the fake provider served by uvicorn on a loopback socket."""

from __future__ import annotations

import asyncio

import pytest

from reqfold.fakes import FakeProvider, Reply, ToolCall
from reqfold.fakes.server import running_server
from reqfold.reference.loop import AgentLoop, ChatCompletionsClient, Tool, counter_clock
from reqfold.reference.reconstruct import compare_with_captures


@pytest.mark.slow
@pytest.mark.spec("REQ-1", "REQ-5", "WIRE-1", "CACHE-1")
def test_a_session_over_a_real_http_server_rebuilds_from_its_log_and_hits_the_cache():
    fake = FakeProvider("deepseek")
    fake.push(
        Reply(
            text="Looking.", tool_calls=(ToolCall.of("lookup", {"key": "a"}, id="c1"),)
        ),
        Reply(text="a is 42."),
        Reply(text="bye"),
    )

    async def lookup(arguments, context):
        return "42"

    async def scenario(url):
        async with ChatCompletionsClient(base_url=url, api_key="sk-local") as client:
            loop = AgentLoop(
                provider=client,
                model="deepseek-chat",
                system="You are a careful assistant. " * 30,
                tools=[Tool(name="lookup", description="Look up.", execute=lookup)],
                clock=counter_clock(),
            )

            async def rules(context, seed, next):
                return [
                    {
                        "role": "user",
                        "content": [{"type": "text", "text": "rules " * 40}],
                    },
                    *await next(),
                ]

            loop.hooks.session_prefix.register(rules)
            await loop.send("what is a?")
            await loop.send("thanks")
            return loop

    with running_server(fake) as url:
        assert url.startswith("http://127.0.0.1:")
        loop = asyncio.run(scenario(url))
    captures = fake.requests
    assert len(captures) == 3
    assert compare_with_captures(loop.session.events, [c.json for c in captures]) == []
    cached = [c.usage["prompt_cache_hit_tokens"] for c in captures]
    assert cached[0] == 0
    assert all(hit > 0 for hit in cached[1:])

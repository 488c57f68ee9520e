"""Echo fidelity of reasoning: reasoning a provider needs back, re-sent
otherwise than returned, is a STREAM-4 finding (issue 26).

In process, through the fake's transport: an Anthropic thinking block
whose signature changed, and DeepSeek's `reasoning_content` stripped from
a turn that called a tool (the API wants it back there, and only there);
each beside the faithful echo, which has no finding, so the finding is
the change's.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from reqfold.conformance.cache import CacheJudgement, judge_cache, read_capture_lines
from reqfold.conformance.outcomes import Outcome
from reqfold.fakes import (
    FakeProvider,
    FakeTransport,
    Reply,
    ToolCall,
    dump_capture_jsonl,
)

THOUGHT = Reply(reasoning="The user greets me; I answer briefly.", text="Hello.")
THOUGHT_AND_CALL = Reply(
    reasoning="I should read main.py first.",
    tool_calls=(ToolCall.of("read", {"path": "main.py"}),),
)
READ = {
    "type": "function",
    "function": {
        "name": "read",
        "description": "Read a file.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
    },
}
Echo = Callable[[Any], Any]


def judged(provider: FakeProvider) -> CacheJudgement:
    return judge_cache(
        read_capture_lines(dump_capture_jsonl(provider.capture).splitlines())
    )


def echo_finding(judgement: CacheJudgement) -> Outcome:
    return next(f for f in judgement.findings if f.id == "cache/echo-fidelity").outcome


def anthropic_turns(echo: Echo) -> CacheJudgement:
    """Two Messages API turns with thinking on; the reply re-sent as `echo` makes it."""
    provider = FakeProvider("anthropic")
    provider.push(THOUGHT)
    client = httpx.Client(transport=FakeTransport(provider), base_url="http://fake")
    messages: list[Any] = [{"role": "user", "content": "hello " * 300}]
    body: dict[str, Any] = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 4000,
        "system": "You are a careful coding agent. " * 60,
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "messages": messages,
    }
    reply = client.post("/v1/messages", json=body).json()
    messages.append({"role": "assistant", "content": echo(reply["content"])})
    messages.append({"role": "user", "content": "and then?"})
    client.post("/v1/messages", json=body)
    return judged(provider)


def deepseek_turns(echo: Echo) -> CacheJudgement:
    """A thinking turn that calls a tool, its result sent back with the reply
    re-sent as `echo` makes it."""
    provider = FakeProvider("deepseek")
    provider.push(THOUGHT_AND_CALL)
    client = httpx.Client(transport=FakeTransport(provider), base_url="http://fake")
    messages: list[Any] = [
        {"role": "system", "content": "You are a careful coding agent. " * 60},
        {"role": "user", "content": "hello " * 300},
    ]
    body = {"model": "deepseek-reasoner", "messages": messages, "tools": [READ]}
    reply = client.post("/chat/completions", json=body).json()
    message = reply["choices"][0]["message"]
    messages.append(echo(message))
    call_id = message["tool_calls"][0]["id"]
    messages.append({"role": "tool", "tool_call_id": call_id, "content": "print(1)"})
    client.post("/chat/completions", json=body)
    return judged(provider)


def same(value: Any) -> Any:
    return copy.deepcopy(value)


def thinking_resigned(content: Any) -> Any:
    changed = copy.deepcopy(content)
    (thinking,) = (b for b in changed if b["type"] == "thinking")
    assert thinking["signature"]
    thinking["signature"] = "forged-" + thinking["signature"]
    return changed


def reasoning_content_stripped(message: Any) -> Any:
    assert message["reasoning_content"]
    return {k: v for k, v in message.items() if k != "reasoning_content"}


@pytest.mark.spec("STREAM-4")
@pytest.mark.parametrize(
    ("turns", "change", "field"),
    [
        pytest.param(anthropic_turns, thinking_resigned, "signature", id="anthropic"),
        pytest.param(
            deepseek_turns,
            reasoning_content_stripped,
            "reasoning_content",
            id="deepseek",
        ),
    ],
)
def test_reasoning_re_sent_otherwise_than_returned_is_an_echo_finding(
    turns: Callable[[Echo], CacheJudgement], change: Echo, field: str
) -> None:
    faithful = turns(same)
    assert faithful.echoes == []
    assert echo_finding(faithful) is Outcome.PASS
    changed = turns(change)
    (echo,) = changed.echoes
    assert echo.index == 1
    assert field in echo.field
    assert echo.returned != echo.echoed
    assert echo_finding(changed) is Outcome.WARN

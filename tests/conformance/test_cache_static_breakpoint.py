"""The static opening of an Anthropic session whose cache breakpoint sits
after a volatile line (issue 26): the breakpoint covers none of the static
opening, and the judgement says so.

In process, through the fake's transport: two process starts a day apart,
the date as the system prompt's first block and the breakpoint on the
last, so the date changes the only cached entry.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from reqfold.conformance.cache import (
    CacheJudgement,
    ProcessStart,
    judge_cache,
    read_capture_lines,
    render_text,
)
from reqfold.fakes import FakeProvider, FakeTransport, dump_capture_jsonl

RULES = "".join(f"Rule {n}: read a file before you change it.\n" for n in range(60))
TOOLS = [{"name": "read", "description": "Read a file. " * 30, "input_schema": {}}]
MARK = {"cache_control": {"type": "ephemeral"}}


def two_days(*, date_first: bool) -> CacheJudgement:
    """One request a process, the second a day later; the date line first
    in the system prompt (`date_first`) or after its cached block."""
    provider = FakeProvider("anthropic")
    client = httpx.Client(transport=FakeTransport(provider), base_url="http://fake")
    for day in ("2026-12-06", "2026-12-07"):
        date = {"type": "text", "text": f"Today is {day}.\n"}
        rules = {"type": "text", "text": RULES, **MARK}
        system: list[Any] = [date, rules] if date_first else [rules, date]
        body = {
            "model": "claude-sonnet-4-5",
            "max_tokens": 100,
            "system": system,
            "tools": TOOLS,
            "messages": [{"role": "user", "content": "hello " * 200}],
        }
        client.post("/v1/messages", json=body)
    lines = dump_capture_jsonl(provider.capture).splitlines()
    starts = [
        ProcessStart(first_index=0, name="run 1", kind="first"),
        ProcessStart(first_index=1, name="run 2", kind="resume"),
    ]
    return judge_cache(read_capture_lines(lines), starts=starts)


@pytest.mark.spec("CACHE-2", "CACHE-3")
def test_a_date_before_the_only_breakpoint_leaves_the_static_opening_uncovered() -> (
    None
):
    judgement = two_days(date_first=True)
    static = judgement.static
    assert static is not None
    assert 0 < static.static_tokens < static.opening_tokens
    assert static.breakpoint_tokens == 0
    text = render_text(judgement)
    assert "no cache breakpoint covers any of it" in text


@pytest.mark.spec("CACHE-2", "CACHE-3")
def test_a_date_after_the_breakpoint_leaves_the_static_opening_covered() -> None:
    judgement = two_days(date_first=False)
    static = judgement.static
    assert static is not None
    assert static.breakpoint_tokens is not None
    assert static.breakpoint_tokens > 0
    assert static.breakpoint_tokens <= static.static_tokens
    text = render_text(judgement)
    assert f"a cache breakpoint covers {static.breakpoint_tokens}" in text
    assert "no cache breakpoint covers" not in text

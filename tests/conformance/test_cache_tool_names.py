"""How the cache judgement names a stream's tools: a built-in Responses tool
without a name shows as its type, not as an empty entry."""

from __future__ import annotations

import httpx

from reqfold.conformance.cache import judge_cache, read_capture_lines, render_text
from reqfold.fakes import FakeProvider, FakeTransport, dump_capture_jsonl


def test_a_responses_tool_without_a_name_shows_as_its_type_in_the_streams_line() -> (
    None
):
    provider = FakeProvider("openai-responses")
    with httpx.Client(
        transport=FakeTransport(provider), base_url="http://fake/v1"
    ) as client:
        answer = client.post(
            "/responses",
            json={
                "model": "gpt-5",
                "instructions": "You are a coding agent. " * 100,
                "tools": [
                    {"type": "function", "name": "shell", "parameters": {}},
                    {"type": "web_search"},
                ],
                "input": [{"role": "user", "content": "hi"}],
            },
        )
    assert answer.status_code == 200, answer.text
    lines = dump_capture_jsonl(provider.capture).splitlines()
    text = render_text(judge_cache(read_capture_lines(iter(lines))))
    streams = [line for line in text.splitlines() if "tools:" in line]
    assert len(streams) == 1
    assert "tools: shell, web_search)" in streams[0]

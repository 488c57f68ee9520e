"""The Responses dialect over HTTP: the official OpenAI SDK against a real
uvicorn server on 127.0.0.1, streamed and not."""

from __future__ import annotations

import pytest
from lazy_sdk import LazySdk

from reqfold.fakes import FakeProvider, Reply, ToolCall
from reqfold.fakes.server import running_server

openai = LazySdk("openai")

pytestmark = pytest.mark.slow

INSTRUCTIONS = "Answer in one word. " * 400


def test_the_sdk_runs_a_tool_loop_over_http_and_the_cache_grows() -> None:
    fake = FakeProvider("openai-responses")
    fake.push(
        Reply(reasoning="need a listing", tool_calls=(ToolCall.of("ls", {}),)),
        Reply(text="two files"),
    )
    tools = [{"type": "function", "name": "ls", "parameters": {"type": "object"}}]
    with running_server(fake) as url:
        client = openai.OpenAI(api_key="sk-test", base_url=url + "/v1", max_retries=0)
        history: list[object] = [{"role": "user", "content": "what is here?"}]
        with client.responses.stream(
            model="gpt-5",
            instructions=INSTRUCTIONS,
            tools=tools,
            input=history,
            store=False,
            include=["reasoning.encrypted_content"],
        ) as stream:
            first = stream.get_final_response()
        reasoning, call = first.output
        assert reasoning.encrypted_content
        history += [
            reasoning.model_dump(exclude_none=True),
            call.model_dump(exclude_none=True, exclude={"parsed_arguments"}),
            {"type": "function_call_output", "call_id": call.call_id, "output": "a b"},
        ]
        second = client.responses.create(
            model="gpt-5", instructions=INSTRUCTIONS, tools=tools, input=history
        )
        client.close()
    assert second.output_text == "two files"
    assert first.usage is not None
    assert second.usage is not None
    assert first.usage.input_tokens_details.cached_tokens == 0
    assert second.usage.input_tokens_details.cached_tokens >= 1024
    assert [r.path for r in fake.requests] == ["/v1/responses", "/v1/responses"]
    assert fake.requests[1].diagnostic is not None
    assert fake.requests[1].diagnostic["relation"] == "append"

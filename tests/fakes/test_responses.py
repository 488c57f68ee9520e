"""The Responses API dialect, driven by the official OpenAI SDK's `responses`
client (in process, over the fake's httpx transport)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from lazy_sdk import LazySdk

from reqfold.fakes import (
    FakeProvider,
    FakeTransport,
    Reply,
    ToolCall,
    rate_limited,
    stream_cut,
)

openai = LazySdk("openai")

# Long enough (> 1024 tokens) for the OpenAI cache to hold it.
INSTRUCTIONS = "You are a careful assistant. " * 300
LS = {
    "type": "function",
    "name": "ls",
    "description": "List a folder.",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
}


@pytest.fixture
def fake() -> FakeProvider:
    return FakeProvider("openai-responses")


@pytest.fixture
def client(fake: FakeProvider) -> Iterator[openai.OpenAI]:
    with httpx.Client(transport=FakeTransport(fake)) as http:
        yield openai.OpenAI(
            api_key="sk-test", base_url="https://api.openai.com/v1", http_client=http
        )


def test_a_plain_answer_has_a_message_item_and_the_usage_fields(
    fake: FakeProvider, client: openai.OpenAI
) -> None:
    fake.push(Reply(text="hello there"))
    response = client.responses.create(model="gpt-5", input="hi")
    assert response.output_text == "hello there"
    assert response.status == "completed"
    assert response.id.startswith("resp_")
    [item] = response.output
    assert item.type == "message"
    assert item.role == "assistant"
    usage = response.usage
    assert usage is not None
    assert usage.input_tokens == fake.last_request.diagnostic["prompt_tokens"]
    assert usage.input_tokens_details.cached_tokens == 0
    assert usage.total_tokens == usage.input_tokens + usage.output_tokens


def test_the_stream_builds_the_same_response_as_the_json_answer(
    fake: FakeProvider, client: openai.OpenAI
) -> None:
    reply = Reply(text="a longer answer, cut in pieces", reasoning="let me think")
    fake.push(reply, reply, reply)
    body = {
        "model": "gpt-5",
        "input": "hi",
        "reasoning": {"summary": "auto"},
        "include": ["reasoning.encrypted_content"],
    }
    whole = client.responses.create(**body)
    fake.reset(cache=False, script=False)  # the same index, so the same ids
    events = list(client.responses.create(**body, stream=True))
    kinds = [event.type for event in events]
    assert kinds[:2] == ["response.created", "response.in_progress"]
    assert kinds[-1] == "response.completed"
    assert kinds.count("response.output_text.delta") > 1
    assert "response.reasoning_summary_text.delta" in kinds
    assert events[-1].response.model_dump() == whole.model_dump()
    with client.responses.stream(**body) as stream:
        text = "".join(
            e.delta for e in stream if e.type == "response.output_text.delta"
        )
    assert text == whole.output_text
    reasoning = whole.output[0]
    assert reasoning.type == "reasoning"
    assert reasoning.summary[0].text == "let me think"
    assert reasoning.encrypted_content


def test_stream_events_are_numbered_in_order_and_end_without_done(
    fake: FakeProvider,
) -> None:
    fake.push(Reply(tool_calls=(ToolCall.of("ls", {"path": "."}),)))
    with httpx.Client(transport=FakeTransport(fake)) as http:
        text = http.post(
            "http://fake/v1/responses",
            json={"model": "gpt-5", "input": "list", "tools": [LS], "stream": True},
        ).text
    frames = [frame for frame in text.split("\n\n") if frame]
    numbers = [
        int(frame.split('"sequence_number":')[1].split(",")[0].rstrip("}"))
        for frame in frames
    ]
    assert numbers == list(range(len(frames)))
    assert "[DONE]" not in text
    assert "event: response.function_call_arguments.delta" in text


def test_a_tool_call_and_its_output_continue_the_cached_prefix(
    fake: FakeProvider, client: openai.OpenAI
) -> None:
    fake.push(Reply(tool_calls=(ToolCall.of("ls", {"path": "."}),)), Reply(text="ok"))
    first_input: list[object] = [{"role": "user", "content": "list the folder"}]
    first = client.responses.create(
        model="gpt-5", instructions=INSTRUCTIONS, tools=[LS], input=first_input
    )
    [call] = first.output
    assert call.type == "function_call"
    assert call.arguments == '{"path":"."}'
    second = client.responses.create(
        model="gpt-5",
        instructions=INSTRUCTIONS,
        tools=[LS],
        input=[
            *first_input,
            call.model_dump(exclude_none=True),
            {"type": "function_call_output", "call_id": call.call_id, "output": "a b"},
        ],
    )
    assert second.usage is not None
    assert first.usage is not None
    cached = second.usage.input_tokens_details.cached_tokens
    assert cached >= 1024
    assert cached % 128 == 0
    assert fake.last_request.diagnostic["relation"] == "append"


def test_previous_response_id_continues_the_stored_conversation_with_its_cache(
    fake: FakeProvider, client: openai.OpenAI
) -> None:
    first = client.responses.create(
        model="gpt-5", instructions=INSTRUCTIONS, input="first question"
    )
    second = client.responses.create(
        model="gpt-5",
        instructions=INSTRUCTIONS,
        previous_response_id=first.id,
        input="second question",
    )
    assert second.previous_response_id == first.id
    assert second.usage is not None
    assert second.usage.input_tokens_details.cached_tokens >= 1024
    assert fake.last_request.diagnostic["relation"] == "append"
    # The same conversation sent whole renders the same prompt: a repeat.
    client.responses.create(
        model="gpt-5",
        instructions=INSTRUCTIONS,
        input=[
            {"role": "user", "content": "first question"},
            first.output[0].model_dump(exclude_none=True),
            {"role": "user", "content": "second question"},
        ],
    )
    assert fake.last_request.diagnostic["relation"] == "repeat"


def test_a_response_sent_with_store_false_cannot_be_continued(
    client: openai.OpenAI,
) -> None:
    unstored = client.responses.create(model="gpt-5", input="hi", store=False)
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(
            model="gpt-5", previous_response_id=unstored.id, input="again"
        )
    error = caught.value.body
    assert isinstance(error, dict)
    assert error["code"] == "previous_response_not_found"
    assert error["param"] == "previous_response_id"


def test_a_different_prompt_cache_key_reads_nothing_of_the_other_keys_cache(
    fake: FakeProvider, client: openai.OpenAI
) -> None:
    body = {"model": "gpt-5", "instructions": INSTRUCTIONS, "input": "hi"}
    client.responses.create(**body, prompt_cache_key="session-a")
    same = client.responses.create(**body, prompt_cache_key="session-a")
    other = client.responses.create(**body, prompt_cache_key="session-b")
    assert same.usage is not None
    assert other.usage is not None
    assert same.usage.input_tokens_details.cached_tokens >= 1024
    assert other.usage.input_tokens_details.cached_tokens == 0


@pytest.mark.parametrize(
    ("short", "long"),
    [
        ("hi", [{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}]),
        (
            [{"role": "user", "content": "hi"}],
            [{"type": "message", "role": "user", "content": "hi"}],
        ),
    ],
)
def test_a_string_and_its_one_text_part_are_the_same_prompt(
    fake: FakeProvider, client: openai.OpenAI, short: object, long: object
) -> None:
    client.responses.create(model="gpt-5", instructions=INSTRUCTIONS, input=short)
    client.responses.create(model="gpt-5", instructions=INSTRUCTIONS, input=long)
    assert fake.last_request.diagnostic["relation"] == "repeat"


def test_an_echoed_message_keeps_the_cache_without_its_id_status_and_annotations(
    fake: FakeProvider, client: openai.OpenAI
) -> None:
    fake.push(Reply(text="answer"), Reply(text="x"), Reply(text="y"))
    first = client.responses.create(model="gpt-5", instructions=INSTRUCTIONS, input="q")
    echoed = first.output[0].model_dump(exclude_none=True)
    bare = {"role": "assistant", "content": "answer"}
    relations = []
    for message in (echoed, bare):
        client.responses.create(
            model="gpt-5",
            instructions=INSTRUCTIONS,
            input=[{"role": "user", "content": "q"}, message],
        )
        relations.append(fake.last_request.diagnostic["relation"])
        assert fake.last_request.diagnostic["echo_divergence"] is None
    # The SDK's echo extends the first request; the bare message repeats it.
    assert relations == ["append", "repeat"]


def test_a_changed_echo_of_the_answer_is_named(
    fake: FakeProvider, client: openai.OpenAI
) -> None:
    fake.push(Reply(text="answer"))
    client.responses.create(model="gpt-5", instructions=INSTRUCTIONS, input="q")
    client.responses.create(
        model="gpt-5",
        instructions=INSTRUCTIONS,
        input=[
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": "answer, rewritten"},
        ],
    )
    echo = fake.last_request.diagnostic["echo_divergence"]
    assert echo is not None
    assert "rewritten" in echo["current"]


def test_a_scripted_fault_is_the_apis_error_and_changes_no_cache(
    fake: FakeProvider, client: openai.OpenAI
) -> None:
    fake.push(rate_limited(retry_after=2))
    with pytest.raises(openai.RateLimitError) as caught:
        client.with_options(max_retries=0).responses.create(model="gpt-5", input="hi")
    assert caught.value.response.headers["retry-after"] == "2"
    assert fake.index.stats().entries == 0


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"model": "gpt-5"}, "input"),
        ({"model": "gpt-5", "input": [{"type": "telepathy"}]}, "input[0].type"),
        (
            {"model": "gpt-5", "input": [{"type": "function_call", "name": "ls"}]},
            "input[0].call_id",
        ),
        (
            {"model": "gpt-5", "input": [{"role": "robot", "content": "hi"}]},
            "input[0].role",
        ),
        ({"model": "gpt-5", "input": "hi", "store": "yes"}, "store"),
        ({"model": "gpt-5", "input": "hi", "tools": [{"name": "x"}]}, "tools[0].type"),
    ],
)
def test_a_request_the_api_refuses_is_a_400_naming_the_field(
    fake: FakeProvider, body: dict[str, object], param: str
) -> None:
    with httpx.Client(transport=FakeTransport(fake)) as http:
        answer = http.post("http://fake/v1/responses", json=body)
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["type"] == "invalid_request_error"
    assert error["param"] == param


def test_an_unknown_model_is_refused_and_a_chat_path_is_a_404(
    fake: FakeProvider,
) -> None:
    with httpx.Client(transport=FakeTransport(fake)) as http:
        unknown = http.post(
            "http://fake/v1/responses", json={"model": "x", "input": "hi"}
        )
        chat = http.post(
            "http://fake/v1/chat/completions",
            json={"model": "gpt-5", "messages": [{"role": "user", "content": "hi"}]},
        )
    assert unknown.status_code == 400
    assert unknown.json()["error"]["code"] == "model_not_found"
    assert chat.status_code == 404
    assert "openai-responses dialect" in chat.json()["error"]["message"]


def test_the_same_requests_get_the_same_bytes(client: openai.OpenAI) -> None:
    def run() -> list[str]:
        fake = FakeProvider("openai-responses")
        with httpx.Client(transport=FakeTransport(fake)) as http:
            sdk = openai.OpenAI(api_key="k", base_url="http://f/v1", http_client=http)
            first = sdk.responses.create(model="gpt-5", input="hi")
            second = sdk.responses.create(
                model="gpt-5", input="again", previous_response_id=first.id
            )
        return [first.model_dump_json(), second.model_dump_json()]

    assert run() == run()


def test_members_sent_as_null_are_the_members_left_out(
    fake: FakeProvider, client: openai.OpenAI
) -> None:
    fake.push(Reply(text="a", reasoning="r"))
    first = client.responses.create(model="gpt-5", instructions=INSTRUCTIONS, input="q")
    reasoning, message = first.output
    with_nulls = [reasoning.model_dump(), message.model_dump()]
    without = [
        reasoning.model_dump(exclude_none=True),
        message.model_dump(exclude_none=True),
    ]
    assert None in with_nulls[0].values()
    for items in (with_nulls, without):
        client.responses.create(
            model="gpt-5",
            instructions=INSTRUCTIONS,
            input=[{"role": "user", "content": "q"}, *items],
        )
    assert fake.last_request.diagnostic["relation"] == "repeat"


def test_a_reply_cut_by_its_length_is_an_incomplete_response(
    fake: FakeProvider, client: openai.OpenAI
) -> None:
    fake.push(Reply(text="half an ans", finish_reason="length"))
    events = list(client.responses.create(model="gpt-5", input="hi", stream=True))
    assert events[-1].type == "response.incomplete"
    response = events[-1].response
    assert response.status == "incomplete"
    assert response.incomplete_details is not None
    assert response.incomplete_details.reason == "max_output_tokens"


def test_keep_alives_are_skipped_and_a_cut_stream_is_an_error_to_the_sdk(
    fake: FakeProvider, client: openai.OpenAI
) -> None:
    fake.push(Reply(text="still here", keepalives=3), stream_cut(4))
    events = list(client.responses.create(model="gpt-5", input="hi", stream=True))
    assert events[-1].type == "response.completed"
    assert events[-1].response.output_text == "still here"
    with pytest.raises(openai.APIConnectionError):
        list(client.responses.create(model="gpt-5", input="hi", stream=True))


def test_the_prompt_counted_for_a_continuation_holds_the_stored_conversation(
    fake: FakeProvider, client: openai.OpenAI
) -> None:
    first = client.responses.create(model="gpt-5", input="first question")
    alone = fake.count_prompt_tokens({"model": "gpt-5", "input": "next"})
    continued = fake.count_prompt_tokens(
        {"model": "gpt-5", "input": "next", "previous_response_id": first.id}
    )
    assert first.usage is not None
    assert continued > alone
    assert continued > first.usage.input_tokens


def test_a_function_call_sent_back_with_other_argument_bytes_is_named(
    fake: FakeProvider, client: openai.OpenAI
) -> None:
    fake.push(
        Reply(reasoning="r", tool_calls=(ToolCall.of("ls", {"path": "."}),)),
        Reply(text="x"),
    )
    first = client.responses.create(
        model="gpt-5", instructions=INSTRUCTIONS, tools=[LS], input="list"
    )
    reasoning, call = first.output
    assert call.type == "function_call"
    respaced = {
        "type": "function_call",
        "call_id": call.call_id,
        "name": "ls",
        "arguments": '{"path": "."}',
    }
    client.responses.create(
        model="gpt-5",
        instructions=INSTRUCTIONS,
        tools=[LS],
        input=[
            {"role": "user", "content": "list"},
            reasoning.model_dump(exclude_none=True),
            respaced,
            {"type": "function_call_output", "call_id": call.call_id, "output": "a"},
        ],
    )
    echo = fake.last_request.diagnostic["echo_divergence"]
    assert echo is not None
    assert echo["field"] == "input[2].arguments"
    assert echo["earlier"] == '{"path":"."}'


def test_an_item_reference_stands_for_the_stored_item_it_names(
    fake: FakeProvider, client: openai.OpenAI
) -> None:
    fake.push(Reply(text="the answer"))
    first = client.responses.create(model="gpt-5", instructions=INSTRUCTIONS, input="q")
    [message] = first.output
    client.responses.create(
        model="gpt-5",
        instructions=INSTRUCTIONS,
        input=[
            {"role": "user", "content": "q"},
            {"type": "item_reference", "id": message.id},
        ],
    )
    assert fake.last_request.diagnostic["relation"] == "append"
    assert fake.last_request.diagnostic["echo_divergence"] is None
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(
            model="gpt-5", input=[{"type": "item_reference", "id": "msg_unknown"}]
        )
    assert isinstance(caught.value.body, dict)
    assert caught.value.body["param"] == "input[0].id"


def test_stored_responses_outlive_a_cache_reset_and_go_with_the_captures(
    fake: FakeProvider, client: openai.OpenAI
) -> None:
    first = client.responses.create(model="gpt-5", input="q")
    fake.reset(cache=True, capture=False, script=False)
    client.responses.create(model="gpt-5", input="again", previous_response_id=first.id)
    fake.reset(cache=False, capture=True, script=False)
    with pytest.raises(openai.BadRequestError):
        client.responses.create(
            model="gpt-5", input="again", previous_response_id=first.id
        )

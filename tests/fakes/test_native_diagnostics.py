"""The providers' own cache diagnostics, read back with the official SDKs:
Anthropic `diagnostics.cache_miss_reason` and OpenAI Responses
`prompt_cache_diagnostics`."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from lazy_sdk import LazySdk

from reqfold.fakes import FakeProvider, FakeTransport
from reqfold.fakes.server import running_server

anthropic_sdk = LazySdk("anthropic")
openai_sdk = LazySdk("openai")

SYSTEM = "You are terse. " * 200
TOOL = {
    "name": "ls",
    "description": "List a folder.",
    "input_schema": {"type": "object", "properties": {}},
}


@pytest.fixture
def claude() -> Iterator[Any]:
    # Over HTTP: this SDK brings an HTTP client of its own (httpx2), which
    # the fake's httpx transport does not plug into.
    with running_server(FakeProvider("anthropic")) as url:
        client = anthropic_sdk.Anthropic(
            api_key="sk-ant-test", base_url=url, max_retries=0
        )
        yield client
        client.close()


def ask(client: Any, previous: str | None, **changes: Any) -> Any:
    body: dict[str, Any] = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 100,
        "system": SYSTEM,
        "tools": [TOOL],
        "messages": [{"role": "user", "content": "hi"}],
        "diagnostics": {"previous_message_id": previous},
    }
    body.update(changes)
    return client.messages.create(**body)


@pytest.mark.slow  # a server: the anthropic SDK's client is httpx2
def test_a_first_turn_and_a_pure_append_have_no_cache_miss_reason(claude: Any) -> None:
    first = ask(claude, None)
    assert first.diagnostics is None
    second = ask(
        claude,
        first.id,
        messages=[
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": "more"},
        ],
    )
    assert second.diagnostics is None
    assert "diagnostics" in second.model_fields_set


@pytest.mark.slow  # a server: the anthropic SDK's client is httpx2
@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"model": "claude-haiku-4-5"}, "model_changed"),
        ({"tools": [{**TOOL, "description": "List files."}]}, "tools_changed"),
        ({"system": SYSTEM + "Today is Monday."}, "system_changed"),
        ({"messages": [{"role": "user", "content": "hello"}]}, "messages_changed"),
    ],
)
def test_a_changed_section_is_named_with_the_tokens_it_missed(
    claude: Any, change: dict[str, Any], reason: str
) -> None:
    first = ask(claude, None)
    second = ask(claude, first.id, **change)
    miss = second.diagnostics.cache_miss_reason
    assert miss.type == reason
    total = first.usage.input_tokens
    assert 0 < miss.cache_missed_input_tokens <= total
    if reason == "model_changed":
        assert miss.cache_missed_input_tokens == total
    if reason == "messages_changed":
        assert miss.cache_missed_input_tokens < total - 1000


@pytest.mark.slow  # a server: the anthropic SDK's client is httpx2
def test_only_a_changed_setting_is_unavailable_and_an_unknown_id_not_found(
    claude: Any,
) -> None:
    first = ask(claude, None)
    other = ask(claude, first.id, tool_choice={"type": "any"})
    assert other.diagnostics.cache_miss_reason.type == "unavailable"
    lost = ask(claude, "msg_unknown")
    assert lost.diagnostics.cache_miss_reason.type == "previous_message_not_found"


@pytest.mark.slow  # a server: the anthropic SDK's client is httpx2
def test_a_message_that_did_not_opt_in_is_not_found_and_none_is_added_unasked(
    claude: Any,
) -> None:
    plain = claude.messages.create(
        model="claude-sonnet-4-5",
        max_tokens=100,
        messages=[{"role": "user", "content": "hi"}],
    )
    assert "diagnostics" not in plain.model_fields_set
    later = ask(claude, plain.id)
    assert later.diagnostics.cache_miss_reason.type == "previous_message_not_found"


@pytest.mark.slow  # a server: the anthropic SDK's client is httpx2
def test_a_stream_carries_the_diagnostics_in_its_message_start(claude: Any) -> None:
    first = ask(claude, None)
    with claude.messages.stream(
        model="claude-haiku-4-5",
        max_tokens=100,
        system=SYSTEM,
        tools=[TOOL],
        messages=[{"role": "user", "content": "hi"}],
        diagnostics={"previous_message_id": first.id},
    ) as stream:
        message = stream.get_final_message()
    assert message.diagnostics.cache_miss_reason.type == "model_changed"


@pytest.fixture
def gpt() -> Iterator[Any]:
    fake = FakeProvider("openai-responses")
    with httpx.Client(transport=FakeTransport(fake)) as http:
        yield openai_sdk.OpenAI(
            api_key="sk-test", base_url="https://api.openai.com/v1", http_client=http
        )


FUNCTION = {"type": "function", "name": "ls", "parameters": {"type": "object"}}


def respond(client: Any, compared: str | None, **changes: Any) -> Any:
    body: dict[str, Any] = {
        "model": "gpt-5",
        "instructions": SYSTEM,
        "tools": [FUNCTION],
        "input": "hi",
        "prompt_cache_key": "a",
    }
    if compared is not None:
        body["prompt_cache_options"] = {"comparison_response_id": compared}
    body.update(changes)
    return client.responses.create(**body)


def test_an_extension_of_the_compared_response_is_a_cache_hit(gpt: Any) -> None:
    first = respond(gpt, None)
    assert first.prompt_cache_diagnostics is None
    same = respond(gpt, first.id)
    assert same.prompt_cache_diagnostics.type == "cache_hit"
    longer = respond(
        gpt,
        first.id,
        input=[{"role": "user", "content": "hi"}, {"role": "user", "content": "x"}],
    )
    assert longer.prompt_cache_diagnostics.type == "cache_hit"


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"model": "gpt-5-mini"}, "model_changed"),
        ({"prompt_cache_key": "b"}, "prompt_cache_key_changed"),
        ({"tools": [{**FUNCTION, "description": "List."}]}, "tools_changed"),
        ({"text": {"format": {"type": "json_object"}}}, "text_format_changed"),
        ({"reasoning": {"effort": "high"}}, "reasoning_effort_changed"),
        ({"text": {"verbosity": "low"}}, "verbosity_changed"),
        ({"instructions": SYSTEM + "Now."}, "input_changed"),
        ({"input": "hello"}, "input_changed"),
    ],
)
def test_a_cache_miss_names_the_reason_the_api_gives(
    gpt: Any, change: dict[str, Any], reason: str
) -> None:
    first = respond(gpt, None)
    second = respond(gpt, first.id, **change)
    diagnosis = second.prompt_cache_diagnostics
    assert diagnosis.type == "cache_miss"
    assert diagnosis.reason == reason
    assert diagnosis.comparison_reusable_tokens == first.usage.input_tokens
    assert 0 < diagnosis.cache_missed_tokens <= first.usage.input_tokens


def test_an_unknown_comparison_response_is_not_found(gpt: Any) -> None:
    answer = respond(gpt, "resp_unknown")
    assert answer.prompt_cache_diagnostics.type == "comparison_response_not_found"


@pytest.mark.parametrize(
    ("dialect", "path", "body", "where"),
    [
        (
            "anthropic",
            "/v1/messages",
            {"diagnostics": "yes"},
            "diagnostics",
        ),
        (
            "anthropic",
            "/v1/messages",
            {"diagnostics": {"previous_message_id": 7}},
            "diagnostics.previous_message_id",
        ),
        (
            "openai-responses",
            "/v1/responses",
            {"prompt_cache_options": {"comparison_response_id": 7}},
            "prompt_cache_options.comparison_response_id",
        ),
    ],
)
def test_a_malformed_opt_in_is_the_apis_400_naming_it(
    dialect: str, path: str, body: dict[str, Any], where: str
) -> None:
    base = (
        {
            "model": "claude-sonnet-4-5",
            "max_tokens": 10,
            "messages": [{"role": "user", "content": "hi"}],
        }
        if dialect == "anthropic"
        else {"model": "gpt-5", "input": "hi"}
    )
    fake = FakeProvider(dialect)
    with httpx.Client(transport=FakeTransport(fake)) as http:
        answer = http.post("http://fake" + path, json={**base, **body})
    assert answer.status_code == 400
    assert where in answer.text
    assert fake.fingerprints.get("anything") is None

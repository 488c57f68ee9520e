"""Scripted replies, responders, defaults and faults."""

from __future__ import annotations

import httpx
import pytest

from reqfold.fakes import (
    Fault,
    Reply,
    ScriptError,
    ToolCall,
    overloaded,
    parse_script_item,
    rate_limited,
    server_error,
)
from reqfold.fakes.script import dump_script_item

USER = {"role": "user", "content": "hi"}


def text_of(response: httpx.Response) -> str:
    return response.json()["choices"][0]["message"]["content"]


def ask(client, content="hi"):
    return client.post(
        "/chat/completions",
        json={
            "model": "deepseek-chat",
            "messages": [{"role": "user", "content": content}],
        },
    )


def test_unscripted_requests_get_the_default_ok_reply(client):
    assert text_of(ask(client)) == "ok"


def test_queued_replies_answer_requests_in_order(client, deepseek):
    deepseek.push(Reply(text="one"), Reply(text="two"))
    assert [text_of(ask(client)) for _ in range(3)] == ["one", "two", "ok"]


def test_a_responder_answers_from_the_request(client, deepseek):
    deepseek.respond_with(
        lambda request: (
            Reply(text=request.last_user_text.upper())
            if request.last_user_text != "skip"
            else None
        )
    )
    assert text_of(ask(client, "shout")) == "SHOUT"
    assert text_of(ask(client, "skip")) == "ok"


def test_the_queue_goes_before_the_responder(client, deepseek):
    deepseek.respond_with(lambda request: Reply(text="responder"))
    deepseek.push(Reply(text="queued"))
    assert [text_of(ask(client)) for _ in range(2)] == ["queued", "responder"]


def test_rate_limited_sends_429_with_retry_after_and_changes_no_cache(client, deepseek):
    deepseek.push(rate_limited(retry_after=2))
    response = ask(client)
    assert response.status_code == 429
    assert response.headers["retry-after"] == "2"
    assert response.json()["error"]["type"] == "rate_limit_error"
    assert deepseek.last_request.usage is None
    assert deepseek.stats().index.entries == 0
    assert ask(client).status_code == 200


@pytest.mark.parametrize(
    ("fault", "status", "kind"),
    [
        (server_error(), 500, "server_error"),
        (server_error(503), 503, "service_unavailable"),
        (overloaded(), 529, "overloaded_error"),
        (
            Fault(status=402, message="Insufficient Balance"),
            402,
            "insufficient_balance",
        ),
    ],
)
def test_faults_use_the_dialect_error_shape(client, deepseek, fault, status, kind):
    deepseek.push(fault)
    response = ask(client)
    assert response.status_code == status
    assert response.json()["error"]["type"] == kind


def test_script_items_round_trip_through_their_json_form():
    items = [
        Reply(
            text="a",
            reasoning="r",
            tool_calls=(ToolCall(name="f", arguments="{}", id="c"),),
            finish_reason="stop",
            delay=0.5,
            hold="g",
            keepalives=2,
            cut_after=3,
        ),
        Fault(
            status=429,
            retry_after=1.0,
            message="slow down",
            error_type="rate_limit_error",
        ),
    ]
    for item in items:
        assert parse_script_item(dump_script_item(item)) == item


def test_script_json_accepts_argument_objects_and_fault_names():
    reply = parse_script_item(
        {"tool_calls": [{"name": "f", "arguments": {"b": 1, "a": 2}}]}
    )
    assert reply.tool_calls[0].arguments == '{"b":1,"a":2}'
    assert parse_script_item({"fault": "rate_limited"}).status == 429


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ([], "must be an object"),
        ({"txt": "a"}, "unknown reply keys"),
        ({"text": 3}, "'text' must be a string"),
        ({"tool_calls": [{"arguments": "{}"}]}, "name must be a string"),
        ({"tool_calls": [{"name": "f", "arguments": 3}]}, "string or an object"),
        ({"fault": "explode"}, "unknown fault"),
        ({"fault": {"status": 200}}, "4xx or 5xx"),
        ({"delay": -1}, "delay"),
        ({"cut_after": "x"}, "integer"),
    ],
)
def test_malformed_script_items_are_refused_with_a_reason(value, message):
    with pytest.raises(ScriptError, match=message):
        parse_script_item(value)


def test_pushing_something_else_than_an_action_is_a_type_error(deepseek):
    with pytest.raises(TypeError, match="Reply or Fault"):
        deepseek.push("ok")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "build",
    [
        lambda: Reply(text="\ud800"),
        lambda: Reply(reasoning="x\udfff"),
        lambda: Reply(completion_tokens=-1),
        lambda: ToolCall(name="ls", arguments="\ud800"),
        lambda: Fault(status=500, message="\ud800"),
        lambda: Fault(status=429, retry_after=-5),
        lambda: Fault(status=429, retry_after=float("inf")),
    ],
)
def test_actions_that_could_not_be_sent_are_refused_when_built(build):
    with pytest.raises(ValueError, match=r"surrogate|>= 0"):
        build()

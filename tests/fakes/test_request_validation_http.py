"""Requests the real providers refuse get the dialect's error over a real server."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from reqfold.fakes import FakeProvider
from reqfold.fakes.server import running_server

pytestmark = pytest.mark.slow

USER = {"role": "user", "content": "hi"}
CHAT = {"model": "deepseek-chat", "messages": [USER]}
MESSAGES = {"model": "claude-sonnet-4-5", "max_tokens": 10, "messages": [USER]}


@pytest.fixture(scope="module")
def chat() -> Iterator[httpx.Client]:
    with (
        running_server(FakeProvider("deepseek")) as url,
        httpx.Client(base_url=url) as client,
    ):
        yield client


@pytest.fixture(scope="module")
def messages() -> Iterator[httpx.Client]:
    with (
        running_server(FakeProvider("anthropic")) as url,
        httpx.Client(base_url=url) as client,
    ):
        yield client


@pytest.mark.parametrize(
    ("member", "value", "param"),
    [
        ("tool_choice", 5, "tool_choice"),
        ("tool_choice", {"type": "function"}, "tool_choice"),
        ("response_format", "json", "response_format"),
        ("response_format", {"type": "yaml"}, "response_format"),
        ("thinking", 5, "thinking"),
        ("reasoning_effort", 5, "reasoning_effort"),
        ("logprobs", "x", "logprobs"),
        ("user_id", {}, "user_id"),
        ("messages", [{"role": "user", "content": [{"type": "image"}]}], None),
        (
            "messages",
            [{"role": "user", "content": [{"type": "image_url"}]}],
            "messages[0].content[0].image_url",
        ),
    ],
)
def test_a_chat_member_of_the_wrong_type_gets_a_400_naming_it(
    chat, member, value, param
):
    response = chat.post("/chat/completions", json={**CHAT, member: value})
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error"
    assert error["param"] == (param or "messages[0].content[0].type")


def test_chat_members_of_the_right_types_are_served(chat):
    body = {
        **CHAT,
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "look"},
                    {"type": "image_url", "image_url": {"url": "data:,"}},
                ],
            }
        ],
        "tool_choice": "auto",
        "response_format": {"type": "json_object"},
        "thinking": {"type": "disabled"},
        "reasoning_effort": "high",
        "logprobs": False,
        "user_id": "u-1",
    }
    assert chat.post("/chat/completions", json=body).status_code == 200


@pytest.mark.parametrize(
    ("member", "value"),
    [
        ("tool_choice", 5),
        ("tool_choice", {"type": "tool"}),
        ("thinking", 5),
        ("thinking", {"type": "enabled"}),
        ("messages", [{"role": "user", "content": [{"type": "image"}]}]),
    ],
)
def test_a_messages_member_of_the_wrong_type_gets_a_400(messages, member, value):
    response = messages.post("/v1/messages", json={**MESSAGES, member: value})
    assert response.status_code == 400, response.text
    assert response.json()["error"]["type"] == "invalid_request_error"


def test_an_unknown_model_gets_deepseeks_error_naming_it(chat):
    response = chat.post("/chat/completions", json={**CHAT, "model": "deepseek-x"})
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["message"].startswith("Model Not Exist: 'deepseek-x'")
    assert "deepseek-chat" in error["message"]


def test_an_unknown_model_gets_openais_404_model_not_found():
    with (
        running_server(FakeProvider("openai")) as url,
        httpx.Client(base_url=url) as client,
    ):
        response = client.post("/v1/chat/completions", json={**CHAT, "model": "gpt-x"})
        served = client.post("/v1/chat/completions", json={**CHAT, "model": "gpt-4o"})
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "model_not_found"
    assert "`gpt-x`" in response.json()["error"]["message"]
    assert served.status_code == 200


def test_an_unknown_model_gets_anthropics_404_not_found(messages):
    response = messages.post("/v1/messages", json={**MESSAGES, "model": "claude-x"})
    assert response.status_code == 404
    assert response.json()["error"]["type"] == "not_found_error"
    assert response.json()["error"]["message"].startswith("model: claude-x")


def test_the_fake_serves_the_models_it_is_told_about():
    provider = FakeProvider("deepseek")
    with running_server(provider) as url, httpx.Client(base_url=url) as client:
        before = client.post("/chat/completions", json={**CHAT, "model": "mine"})
        client.post("/_fake/config", json={"models": ["mine"]})
        after = client.post("/chat/completions", json={**CHAT, "model": "mine"})
        client.post("/_fake/config", json={"models": ["*"]})
        anything = client.post("/chat/completions", json={**CHAT, "model": "zz"})
    assert (before.status_code, after.status_code) == (400, 200)
    assert anything.status_code == 200
    assert [r.status for r in provider.requests] == [400, 200, 200]

"""Replies routed by request over HTTP, unserved paths captured, and a
capture line holding each body once; on a real uvicorn server."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest

from reqfold.fakes import FakeProvider
from reqfold.fakes.capture import raw_body_text
from reqfold.fakes.server import running_server

pytestmark = pytest.mark.slow

MAIN_SYSTEM = "You are the main agent."
TOOLS = [
    {
        "type": "function",
        "function": {"name": "read", "parameters": {"type": "object"}},
    }
]


def chat(system: str, user: str, *, tools: bool = True) -> dict[str, object]:
    body: dict[str, object] = {
        "model": "deepseek-chat",
        "messages": [
            {"role": "system", "content": system},
            {"role": "user", "content": user},
        ],
    }
    if tools:
        body["tools"] = TOOLS
    return body


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with (
        running_server(FakeProvider("deepseek")) as url,
        httpx.Client(base_url=url) as session,
    ):
        yield session


def answer(client: httpx.Client, body: dict[str, object], key: str = "k") -> str:
    response = client.post(
        "/chat/completions", json=body, headers={"authorization": f"Bearer {key}"}
    )
    assert response.status_code == 200, response.text
    return str(response.json()["choices"][0]["message"]["content"])


def test_a_side_request_does_not_take_the_main_stream_s_routed_reply(
    client: httpx.Client,
) -> None:
    routed = client.post(
        "/_fake/script",
        json={
            "match": {"system": "main agent", "tools": ["read"]},
            "replies": [{"text": "main one"}, {"text": "main two"}],
        },
    )
    assert routed.status_code == 200, routed.text
    client.post("/_fake/script", json={"replies": [{"text": "from the queue"}]})
    # a title generator first: no tools, another system prompt
    assert answer(client, chat("You write titles.", "hi", tools=False)) == (
        "from the queue"
    )
    assert answer(client, chat(MAIN_SYSTEM, "hi")) == "main one"
    assert answer(client, chat("You write titles.", "again", tools=False)) == "ok"
    assert answer(client, chat(MAIN_SYSTEM, "more")) == "main two"


def test_routes_match_on_the_model_the_api_key_and_the_last_user_message(
    client: httpx.Client,
) -> None:
    for match, text in [
        ({"api_key": "secret-2"}, "for key 2"),
        ({"last_user": "summarize"}, "a summary"),
        ({"model": "deepseek-reasoner"}, "reasoned"),
    ]:
        client.post("/_fake/script", json={"match": match, "replies": [{"text": text}]})
    assert answer(client, chat(MAIN_SYSTEM, "please summarize")) == "a summary"
    assert answer(client, chat(MAIN_SYSTEM, "hi"), key="secret-2") == "for key 2"
    body = {**chat(MAIN_SYSTEM, "hi"), "model": "deepseek-reasoner"}
    assert answer(client, body) == "reasoned"
    shown = client.get("/_fake/script").json()
    assert [route["pending"] for route in shown["routes"]] == [[], [], []]
    assert "secret-2" not in json.dumps(shown)  # the key is kept as its digest


@pytest.mark.parametrize(
    "match",
    [{}, {"colour": "red"}, {"tools": "read"}, {"system": 3}, []],
)
def test_a_bad_match_is_a_400_and_queues_nothing(
    client: httpx.Client, match: object
) -> None:
    response = client.post(
        "/_fake/script", json={"match": match, "replies": [{"text": "x"}]}
    )
    assert response.status_code == 400
    assert response.json()["error"]["message"]
    assert client.get("/_fake/script").json() == {"pending": []}


def test_requests_to_paths_the_fake_does_not_serve_are_captured(
    client: httpx.Client,
) -> None:
    body = {"model": "gpt-5", "input": "hi"}
    response = client.post(
        "/v1/responses", json=body, headers={"authorization": "Bearer sk-secret"}
    )
    assert response.status_code == 404
    assert client.get("/v1/models").status_code == 404
    lines = [
        json.loads(line)
        for line in client.get("/_fake/requests.jsonl").text.splitlines()
    ]
    assert [(r["method"], r["path"], r["status"]) for r in lines] == [
        ("POST", "/v1/responses", 404),
        ("GET", "/v1/models", 404),
    ]
    assert all(line["unserved"] for line in lines)
    assert lines[0]["body"] == body
    assert "sk-secret" not in json.dumps(lines)
    assert answer(client, chat(MAIN_SYSTEM, "hi")) == "ok"  # indexes go on


def test_a_capture_line_holds_a_compact_body_once_and_rebuilds_its_text(
    client: httpx.Client,
) -> None:
    big = "x" * 100_000
    compact = json.dumps(chat(MAIN_SYSTEM, big), separators=(",", ":"))
    spaced = json.dumps(chat(MAIN_SYSTEM, "é" + big))
    odd = '{"model":"deepseek-chat",  "messages":[{"role":"user","content":"hi"}]}'
    for text in (compact, spaced, odd):
        response = client.post(
            "/chat/completions",
            content=text.encode(),
            headers={"content-type": "application/json"},
        )
        assert response.status_code == 200
    capture = client.get("/_fake/requests.jsonl").text
    lines = [json.loads(line) for line in capture.splitlines()]
    assert [line.get("raw_body_layout") for line in lines] == [
        "compact",
        "spaced, non-ASCII escaped",
        None,
    ]
    assert [raw_body_text(line) for line in lines] == [compact, spaced, odd]
    # each 100 KB body once: the line is a little over one body, not two
    assert len(capture.splitlines()[0]) < 110_000


def _reply_text(dialect: str, answer: dict[str, object]) -> str:
    """The text of a non-streamed answer in the dialect's shape."""
    if dialect == "anthropic":
        blocks = answer["content"]
        assert isinstance(blocks, list)
        return "".join(b["text"] for b in blocks if b["type"] == "text")
    items = answer["output"]
    assert isinstance(items, list)
    return "".join(
        part["text"]
        for item in items
        if item["type"] == "message"
        for part in item["content"]
        if part["type"] == "output_text"
    )


def _request(dialect: str, system: str, user: str) -> tuple[str, dict[str, object]]:
    """A request with this system text and last user text, as the dialect's
    harnesses send it (blocks and parts, not strings)."""
    if dialect == "anthropic":
        return "/v1/messages", {
            "model": "claude-sonnet-4-5",
            "max_tokens": 64,
            "system": [{"type": "text", "text": system}],
            "tools": [{"name": "read", "input_schema": {"type": "object"}}],
            "messages": [{"role": "user", "content": [{"type": "text", "text": user}]}],
        }
    # Codex's shape: no `instructions`, a developer item, `input_text` parts
    return "/v1/responses", {
        "model": "gpt-5",
        "tools": [
            {"type": "function", "name": "read", "parameters": {"type": "object"}},
            {"type": "web_search"},
        ],
        "input": [
            {
                "type": "message",
                "role": "developer",
                "content": [{"type": "input_text", "text": system}],
            },
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": user}],
            },
        ],
    }


@pytest.mark.parametrize("dialect", ["anthropic", "openai-responses"])
def test_every_match_field_routes_requests_of_the_anthropic_and_responses_dialects(
    dialect: str,
) -> None:
    routes = [
        ({"system": "main agent", "tools": ["read"]}, "main"),
        ({"last_user": "summarize"}, "a summary"),
    ]
    with (
        running_server(FakeProvider(dialect)) as url,
        httpx.Client(base_url=url) as session,
    ):
        for match, text in routes:
            routed = session.post(
                "/_fake/script", json={"match": match, "replies": [{"text": text}]}
            )
            assert routed.status_code == 200, routed.text

        def ask(system: str, user: str) -> str:
            path, body = _request(dialect, system, user)
            response = session.post(path, json=body)
            assert response.status_code == 200, response.text
            return _reply_text(dialect, response.json())

        assert ask("You write titles.", "please summarize") == "a summary"
        assert ask("You write titles.", "hi") == "ok"
        assert ask(MAIN_SYSTEM, "hi") == "main"


@pytest.mark.parametrize(
    ("dialect", "served"),
    [
        ("openai-responses", "POST /v1/responses, POST /responses"),
        ("anthropic", "POST /v1/messages, POST /anthropic/v1/messages"),
    ],
)
def test_the_unknown_url_error_lists_only_this_provider_s_paths_once_each(
    dialect: str, served: str
) -> None:
    with (
        running_server(FakeProvider(dialect)) as url,
        httpx.Client(base_url=url) as session,
    ):
        response = session.get("/v1/models")
    assert response.status_code == 404
    message = response.text
    assert f"The fake serves {served} and the control surface" in message
    for other in ("/chat/completions", "/v1/messages", "/v1/responses"):
        if other not in served:
            assert other not in message

"""The control surface over a real server: bad control input is a 400, and
nothing it accepts can make a later request fail with a 500."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest

from reqfold.fakes import FakeProvider
from reqfold.fakes.server import running_server

pytestmark = pytest.mark.slow

CHAT = {"model": "deepseek-chat", "messages": [{"role": "user", "content": "hi"}]}


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with (
        running_server(FakeProvider("deepseek")) as url,
        httpx.Client(base_url=url) as session,
    ):
        yield session


LONE = "\\ud800"
BAD_SCRIPT_ITEMS = [
    f'{{"text": "a{LONE}"}}',
    f'{{"reasoning": "{LONE}"}}',
    f'{{"finish_reason": "{LONE}"}}',
    f'{{"tool_calls": [{{"name": "{LONE}"}}]}}',
    f'{{"tool_calls": [{{"name": "ls", "id": "{LONE}"}}]}}',
    f'{{"tool_calls": [{{"name": "ls", "arguments": "{LONE}"}}]}}',
    f'{{"tool_calls": [{{"name": "ls", "arguments": {{"k": "{LONE}"}}}}]}}',
    f'{{"fault": {{"status": 500, "message": "{LONE}"}}}}',
    f'{{"fault": {{"status": 500, "type": "{LONE}"}}}}',
    f'{{"hold": "{LONE}"}}',
    '{"completion_tokens": -1}',
    '{"fault": {"status": 429, "retry_after": -5}}',
    '{"fault": {"status": 429, "retry_after": 1e400}}',
    '{"delay": 1e400}',
]


@pytest.mark.parametrize("item", BAD_SCRIPT_ITEMS)
def test_a_script_item_that_cannot_be_answered_is_refused_whole(client, item):
    raw = '{"replies": [{"text": "fine"}, ' + item + "]}"
    response = client.post("/_fake/script", content=raw.encode())
    assert response.status_code == 400, response.text
    assert response.json()["error"]["message"]
    assert client.get("/_fake/script").json() == {"pending": []}
    answer = client.post("/chat/completions", json=CHAT)
    assert answer.status_code == 200
    assert answer.json()["choices"][0]["message"]["content"] == "ok"


def test_a_clock_advance_by_a_400_digit_integer_is_a_400(client):
    raw = '{"seconds": ' + "9" * 400 + "}"
    response = client.post("/_fake/clock/advance", content=raw.encode())
    assert response.status_code == 400
    assert "too large" in response.json()["error"]["message"]
    assert client.get("/_fake/clock").json() == {"now": 0.0}


def test_the_clock_never_becomes_infinite(client):
    first = client.post("/_fake/clock/advance", json={"seconds": 1e308})
    second = client.post("/_fake/clock/advance", json={"seconds": 1e308})
    assert (first.status_code, second.status_code) == (400, 400)
    assert "limit" in second.json()["error"]["message"]
    clock = client.get("/_fake/clock")
    assert json.loads(clock.text, parse_constant=pytest.fail) == {"now": 0.0}
    assert client.post("/chat/completions", json=CHAT).status_code == 200


def test_the_clock_can_still_advance_far_up_to_its_limit(client):
    now = client.post("/_fake/clock/advance", json={"seconds": 10**12}).json()
    assert now == {"now": 1e12}
    assert client.post("/chat/completions", json=CHAT).status_code == 200

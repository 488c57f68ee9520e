"""The `/_fake/` control surface, exercised through the in-process transport."""

from __future__ import annotations

import json

import pytest

BODY = {
    "model": "deepseek-chat",
    "messages": [
        {"role": "system", "content": "s " * 200},
        {"role": "user", "content": "hi"},
    ],
}


def test_health_and_config_describe_the_provider(client):
    assert client.get("/_fake/health").json() == {"ok": True, "dialect": "deepseek"}
    config = client.get("/_fake/config").json()
    assert (config["block_size"], config["tokenizer"]) == (64, "approx-v1")


def test_config_overrides_apply_and_bad_keys_are_refused(client, deepseek):
    assert (
        client.post("/_fake/config", json={"ttl": 30, "block_size": 16}).json()["ttl"]
        == 30
    )
    assert deepseek.profile.block_size == 16
    response = client.post("/_fake/config", json={"blok_size": 1})
    assert response.status_code == 400
    assert "unknown config keys" in response.json()["error"]["message"]
    assert client.post("/_fake/config", json={"block_size": 0}).status_code == 400


def test_scripted_replies_posted_over_http_answer_the_next_requests(client):
    response = client.post(
        "/_fake/script",
        json={
            "replies": [
                {"text": "first"},
                {
                    "tool_calls": [
                        {"name": "ls", "arguments": {"dir": "."}, "id": "call_1"}
                    ]
                },
                {"fault": {"status": 429, "retry_after": 3}},
            ]
        },
    )
    assert response.json() == {"queued": 3, "pending": 3}
    assert len(client.get("/_fake/script").json()["pending"]) == 3
    first = client.post("/chat/completions", json=BODY).json()
    assert first["choices"][0]["message"]["content"] == "first"
    second = client.post("/chat/completions", json=BODY).json()
    assert (
        second["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
        == '{"dir":"."}'
    )
    third = client.post("/chat/completions", json=BODY)
    assert (third.status_code, third.headers["retry-after"]) == (429, "3")


def test_a_malformed_script_is_refused_whole(client, deepseek):
    response = client.post(
        "/_fake/script", json={"replies": [{"text": "ok"}, {"bogus": 1}]}
    )
    assert response.status_code == 400
    assert len(deepseek.script) == 0


def test_captured_requests_diagnostics_and_stats_are_readable(client):
    client.post("/chat/completions", json=BODY)
    client.post("/chat/completions", json=BODY)
    requests = client.get("/_fake/requests").json()["requests"]
    assert [r["index"] for r in requests] == [0, 1]
    assert client.get("/_fake/requests?since=1").json()["requests"][0]["index"] == 1
    one = client.get("/_fake/requests/1").json()
    assert one["usage"]["prompt_cache_hit_tokens"] > 0
    assert client.get("/_fake/requests/9").status_code == 404
    lines = client.get("/_fake/requests.jsonl").text.splitlines()
    assert [json.loads(line)["index"] for line in lines] == [0, 1]
    diagnostics = client.get("/_fake/diagnostics").json()["diagnostics"]
    assert [d["relation"] for d in diagnostics] == ["first", "repeat"]
    stats = client.get("/_fake/stats").json()
    assert stats["answered"] == 2
    assert stats["cached_tokens"] == one["usage"]["prompt_cache_hit_tokens"]


def test_the_clock_advances_over_http_and_expires_entries(client):
    client.post("/_fake/config", json={"ttl": 60})
    client.post("/chat/completions", json=BODY)
    assert client.post("/_fake/clock/advance", json={"seconds": 61}).json() == {
        "now": 61.0
    }
    assert client.get("/_fake/clock").json() == {"now": 61.0}
    usage = client.post("/chat/completions", json=BODY).json()["usage"]
    assert usage["prompt_cache_hit_tokens"] == 0
    assert client.post("/_fake/clock/advance", json={"seconds": -1}).status_code == 400


def test_reset_clears_what_it_is_asked_to(client, deepseek):
    client.post("/chat/completions", json=BODY)
    assert client.post("/_fake/reset", json={"capture": False}).json() == {
        "reset": ["cache", "script"]
    }
    assert len(deepseek.requests) == 1
    assert client.post("/_fake/reset", json={"cache": "yes"}).status_code == 400


def test_gates_open_over_http(client, deepseek):
    gate = deepseek.gate("g")
    assert client.post("/_fake/gates/g/open").json() == {"gate": "g", "open": True}
    assert gate.is_open


def test_count_tokens_uses_the_fake_tokenizer(client, deepseek):
    assert client.post("/_fake/count-tokens", json={"text": "hello world"}).json() == {
        "tokens": 4,
        "tokenizer": "approx-v1",
    }
    counted = client.post("/_fake/count-tokens", json={"body": BODY}).json()
    assert counted["prompt_tokens"] == deepseek.count_prompt_tokens(BODY)
    assert client.post("/_fake/count-tokens", json={"body": {}}).status_code == 400


@pytest.mark.parametrize(
    ("method", "path"), [("GET", "/_fake/nope"), ("PUT", "/_fake/script")]
)
def test_unknown_control_endpoints_get_404(client, method, path):
    response = client.request(method, path)
    assert response.status_code == 404
    assert "no control endpoint" in response.json()["error"]["message"]


def test_control_bodies_that_are_not_json_get_400(client):
    response = client.post("/_fake/script", content=b"{")
    assert response.status_code == 400


@pytest.mark.parametrize(
    "overrides",
    [
        {"ttl": "abc"},
        {"ttl": True},
        {"max_age": "nan"},
        {"block_size": 1.5},
        {"chunk_chars": 2.5},
        {"capacity_tokens": "x"},
        {"seed": 1.5},
        {"refresh_on_hit": 1},
        {"stream_usage": "sometimes"},
        {"default_text": "\ud800"},
    ],
)
def test_a_config_value_of_the_wrong_type_is_refused_and_changes_nothing(
    client, deepseek, overrides
):
    before = deepseek.profile
    response = client.post(
        "/_fake/config",
        content=json.dumps({"block_size": 32, **overrides}),
        headers={"content-type": "application/json"},
    )
    assert response.status_code == 400
    assert deepseek.profile is before
    assert deepseek.index.capacity_tokens == before.capacity_tokens
    body = {"model": "deepseek-chat", "messages": [{"role": "user", "content": "x"}]}
    assert client.post("/chat/completions", json=body).status_code == 200

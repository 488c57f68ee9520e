"""The capture log and its JSONL form."""

from __future__ import annotations

import json

from reqfold.fakes import FakeProvider, HttpRequest, dump_capture_jsonl
from reqfold.fakes.capture import LAYOUTS, lay_out, raw_body_text

BODY = (
    b'{"model": "deepseek-chat",  "messages": '
    b'[{"role": "user", "content": "h\\u00e9"}]}'
)


def test_every_request_is_captured_with_its_exact_raw_body(deepseek):
    deepseek.handle(HttpRequest(method="POST", path="/v1/chat/completions", body=BODY))
    record = deepseek.last_request
    assert record.raw_body == BODY
    assert record.body == {
        "model": "deepseek-chat",
        "messages": [{"role": "user", "content": "hé"}],
    }
    assert record.reply == {"role": "assistant", "content": "ok"}
    assert record.usage["prompt_tokens"] == record.diagnostic["prompt_tokens"]


def test_capture_jsonl_has_one_line_per_request_with_the_checker_fields(deepseek):
    deepseek.handle(HttpRequest(method="POST", path="/chat/completions", body=BODY))
    deepseek.handle(HttpRequest(method="POST", path="/chat/completions", body=b"{oops"))
    lines = deepseek.capture_jsonl().splitlines()
    assert len(lines) == 2
    first, second = (json.loads(line) for line in lines)
    assert list(first)[:5] == ["index", "method", "path", "status", "at"]
    assert first["index"] == 0
    assert first["path"] == "/chat/completions"
    assert first["body"]["messages"][0]["content"] == "hé"
    assert first["raw_body"] == BODY.decode()
    assert set(first["usage"]) >= {"prompt_tokens", "prompt_cache_hit_tokens"}
    assert first["diagnostic"]["relation"] == "first"
    assert second["status"] == 400
    assert second["body"] is None
    assert second["usage"] is None


def test_body_member_order_survives_the_jsonl_round_trip(deepseek):
    raw = b'{"messages": [{"content": "x", "role": "user"}], "model": "deepseek-chat"}'
    deepseek.handle(HttpRequest(method="POST", path="/chat/completions", body=raw))
    line = json.loads(deepseek.capture_jsonl())
    assert list(line["body"]) == ["messages", "model"]
    assert list(line["body"]["messages"][0]) == ["content", "role"]


def test_api_keys_are_never_captured(deepseek):
    deepseek.handle(
        HttpRequest(
            method="POST",
            path="/chat/completions",
            body=BODY,
            headers=(
                ("authorization", "Bearer sk-secret"),
                ("x-api-key", "sk-other"),
                ("user-agent", "harness/1"),
            ),
        )
    )
    dumped = deepseek.capture_jsonl()
    assert "sk-secret" not in dumped
    assert "sk-other" not in dumped
    assert dict(deepseek.last_request.headers)["user-agent"] == "harness/1"


def test_non_utf8_bodies_are_kept_as_base64(deepseek):
    deepseek.handle(
        HttpRequest(method="POST", path="/chat/completions", body=b"\xff\x00")
    )
    line = json.loads(dump_capture_jsonl(deepseek.requests))
    assert line["raw_body"] is None
    assert line["raw_body_base64"] == "/wA="


def test_a_capture_limit_keeps_the_newest_records():
    provider = FakeProvider("deepseek", capture_limit=2)
    for _ in range(3):
        provider.handle(HttpRequest(method="POST", path="/chat/completions", body=BODY))
    assert [r.index for r in provider.requests] == [1, 2]
    assert provider.capture.dropped == 1


def test_each_capture_carries_a_digest_of_its_api_key_so_sessions_can_be_told_apart(
    deepseek,
):
    for key in ("sk-one", "sk-two", "sk-one"):
        deepseek.handle(
            HttpRequest(
                method="POST",
                path="/chat/completions",
                body=BODY,
                headers=(("authorization", f"Bearer {key}"),),
            )
        )
    first, second, third = (
        json.loads(line) for line in deepseek.capture_jsonl().splitlines()
    )
    assert first["key"] == third["key"] != second["key"]
    assert "sk-one" not in deepseek.capture_jsonl()
    assert len(first["key"]) == 16


def test_a_body_sent_in_a_known_layout_is_kept_once_per_line_and_rebuilt_exactly(
    deepseek,
):
    body = {"model": "deepseek-chat", "messages": [{"role": "user", "content": "hé"}]}
    for layout in LAYOUTS:
        raw = lay_out(body, layout).encode()
        deepseek.handle(HttpRequest(method="POST", path="/chat/completions", body=raw))
        text = dump_capture_jsonl([deepseek.last_request])
        line = json.loads(text)
        assert line["raw_body"] is None
        assert line["raw_body_layout"] == layout
        assert raw_body_text(line) == raw.decode()
        assert len(text) < len(raw) + 1200  # the body once, not twice


def test_a_body_no_layout_rebuilds_keeps_its_exact_text():
    provider = FakeProvider("deepseek")
    raw = b'{"model":"deepseek-chat","temperature":1e0,"messages":[]}'
    provider.handle(HttpRequest(method="POST", path="/chat/completions", body=raw))
    line = json.loads(provider.capture_jsonl())
    assert line["raw_body_layout"] is None
    assert line["raw_body"] == raw.decode()
    assert raw_body_text(line) == raw.decode()

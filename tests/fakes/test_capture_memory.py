"""The capture keeps bodies small: deltas and zlib, parsed only when read."""

from __future__ import annotations

import json
import random
from typing import Any

import httpx
import pytest

from reqfold.fakes import FakeProvider, HttpRequest
from reqfold.fakes.body_delta import Delta, Whole, pack_delta, pack_whole, unpack
from reqfold.fakes.capture import (
    DEFAULT_CAPTURE_BYTES,
    WHOLE_EVERY,
    CapturedRequest,
    CaptureLog,
    raw_body_text,
)
from reqfold.fakes.server import running_server

WORDS = ["the", "request", "header", "is", "folded", "from", "a", "log", "and"]


def prose(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def session_bodies(count: int, seed: int = 7) -> list[bytes]:
    """A harness session's bodies: about 100 KB (a system prompt and 30
    tools after the messages), each the previous plus a reply and a user
    message, `stream` flipping; every 60 requests the history is compacted
    to a summary, as harnesses do, so bodies stay 100-160 KB."""
    rng = random.Random(seed)
    tools = [
        {"type": "function", "function": {"name": f"t{n}", "description": text}}
        for n, text in enumerate(prose(rng, 300) for _ in range(30))
    ]
    system = {"role": "system", "content": prose(rng, 11_200)}
    messages: list[dict[str, Any]] = [{"role": "user", "content": prose(rng, 40)}]
    bodies = []
    for index in range(count):
        if index % 60 == 59:
            messages = [{"role": "user", "content": "summary: " + prose(rng, 200)}]
        body = {
            "model": "deepseek-chat",
            "messages": [system, *messages],
            "tools": tools,
            "stream": index % 2 == 1,
        }
        bodies.append(json.dumps(body).encode())
        messages += [
            {"role": "assistant", "content": prose(rng, 60)},
            {"role": "user", "content": prose(rng, 150)},
        ]
    return bodies


def captured(index: int, raw: bytes) -> CapturedRequest:
    return CapturedRequest(
        index=index,
        method="POST",
        path="/chat/completions",
        headers=(),
        raw_body=raw,
        body=json.loads(raw),
        status=200,
        at=0.0,
    )


def test_three_thousand_requests_of_100_kb_fit_within_the_default_capture_bound():
    log = CaptureLog(max_bytes=DEFAULT_CAPTURE_BYTES)
    bodies = session_bodies(3_000)
    for index, raw in enumerate(bodies):
        log.append(captured(index, raw), parsed=True)
    raw_total = sum(len(raw) for raw in bodies)
    assert min(len(raw) for raw in bodies) > 100_000
    assert raw_total > 5 * DEFAULT_CAPTURE_BYTES  # bounded by raw bytes: ~600 kept
    assert (len(log), log.dropped, log.bytes) == (3_000, 0, raw_total)
    assert log.stored_bytes <= DEFAULT_CAPTURE_BYTES // 8
    assert log.stats().stored_bytes == log.stored_bytes
    for index, (record, raw) in enumerate(zip(log, bodies, strict=True)):
        assert (record.index, record.raw_body) == (index, raw)
    assert log[-1].body == json.loads(bodies[-1])
    assert log[1_234].body == json.loads(bodies[1_234])


def test_every_record_reads_back_byte_for_byte_and_parsed_from_any_position():
    log = CaptureLog()
    bodies = session_bodies(3 * WHOLE_EVERY + 5)
    for index, raw in enumerate(bodies):
        log.append(captured(index, raw), parsed=True)
    for position in (0, 1, WHOLE_EVERY - 1, WHOLE_EVERY, 2 * WHOLE_EVERY + 3, -1):
        assert log[position].raw_body == bodies[position]
        assert log[position].body == json.loads(bodies[position])
    found = log.by_index(WHOLE_EVERY + 1)
    assert found is not None
    assert found.raw_body == bodies[WHOLE_EVERY + 1]
    assert log.by_index(len(bodies)) is None


def test_dropping_the_oldest_record_keeps_every_later_one_readable():
    log = CaptureLog(max_records=5)
    bodies = session_bodies(40)
    for index, raw in enumerate(bodies):
        log.append(captured(index, raw), parsed=True)
        kept = bodies[max(0, index - 4) : index + 1]
        assert [record.raw_body for record in log] == kept
    assert (log.dropped, log.dropped_bytes) == (35, sum(map(len, bodies[:35])))
    assert log.bytes == sum(map(len, bodies[35:]))


def test_a_body_that_is_not_the_raw_body_parsed_is_kept_as_it_was_given():
    log = CaptureLog()
    raw = b'{"model": "m", "messages": []}'
    log.append(captured(0, raw), parsed=True)
    log.append(
        CapturedRequest(
            index=1,
            method="POST",
            path="/chat/completions",
            headers=(),
            raw_body=raw,
            body=None,
            status=500,
            at=0.0,
        )
    )
    assert [(record.raw_body, record.body) for record in log] == [
        (raw, {"model": "m", "messages": []}),
        (raw, None),
    ]


def test_the_provider_keeps_a_session_in_a_fraction_of_its_bytes_and_reads_it_back():
    provider = FakeProvider("deepseek")
    bodies = session_bodies(150)
    for raw in bodies:
        plan = provider.handle(
            HttpRequest(method="POST", path="/chat/completions", body=raw)
        )
        assert plan.status == 200
    stats = provider.stats().capture
    assert (stats.requests, stats.bytes) == (150, sum(map(len, bodies)))
    assert stats.stored_bytes * 20 < stats.bytes
    assert [record.raw_body for record in provider.requests] == bodies
    assert [record.body for record in provider.iter_requests()] == [
        json.loads(raw) for raw in bodies
    ]
    lines = provider.capture_jsonl().splitlines()
    assert [json.loads(line)["body"] for line in lines] == [
        json.loads(raw) for raw in bodies
    ]
    assert [r.diagnostic for r in provider.capture_summaries()] == [
        r.diagnostic for r in provider.requests
    ]


def test_a_delta_rebuilds_insertions_edits_and_unrelated_bodies_exactly():
    rng = random.Random(11)
    earlier = json.dumps({"a": prose(rng, 3_000), "b": prose(rng, 3_000)}).encode()
    cases = [
        earlier,
        earlier[:5_000] + b"inserted" * 40 + earlier[5_000:],
        earlier[:-5] + b"true}",
        earlier[:100],
        earlier + earlier,
        earlier.replace(b"the", b"THE"),
        rng.randbytes(4_000),
        b"",
    ]
    for _ in range(50):  # seeded random splices
        at = rng.randrange(len(earlier))
        cut = rng.randrange(200)
        spliced = rng.randbytes(rng.randrange(300))
        cases.append(earlier[:at] + spliced + earlier[at + cut :])
    for raw in cases:
        assert unpack(pack_delta(raw, earlier), earlier) == raw
        assert unpack(pack_whole(raw), None) == raw


def test_a_body_that_extends_the_earlier_one_keeps_only_what_it_adds():
    rng = random.Random(3)
    earlier = json.dumps({"messages": [prose(rng, 8_000)], "tools": [prose(rng, 9)]})
    later = earlier.replace('"], "tools"', '", "' + prose(rng, 100) + '"], "tools"')
    delta = pack_delta(later.encode(), earlier.encode())
    assert isinstance(delta, Delta)
    assert delta.stored < 1_000 < len(later) // 20
    assert isinstance(pack_whole(later.encode()), Whole)


@pytest.mark.slow
def test_the_jsonl_served_over_http_is_made_line_by_line_and_reads_back_exactly():
    provider = FakeProvider("deepseek")
    bodies = session_bodies(WHOLE_EVERY + 10)
    with running_server(provider) as url, httpx.Client(base_url=url) as client:
        empty = client.get("/_fake/requests.jsonl")
        for raw in bodies:
            assert client.post("/chat/completions", content=raw).is_success
        served = client.get("/_fake/requests.jsonl")
    assert (empty.status_code, empty.content) == (200, b"")
    assert served.text == provider.capture_jsonl()
    lines = [json.loads(line) for line in served.text.splitlines()]
    assert [raw_body_text(line) for line in lines] == [raw.decode() for raw in bodies]

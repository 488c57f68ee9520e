"""The checks know dialects only through the fake's registry: a provider
added as one row is judged under its own row's cache rules, and a wire
format added there is counted when a capture holds it."""

from __future__ import annotations

import dataclasses
import json
from collections import Counter

import httpx
import pytest

from reqfold.conformance.cache import (
    CacheJudgement,
    ProcessStart,
    judge_cache,
    read_capture_lines,
)
from reqfold.conformance.cache.prompts import caches_in_blocks, choose_profile
from reqfold.conformance.check.capture_dialect import path_dialect
from reqfold.conformance.check.reconstruction import read_captures
from reqfold.fakes import FakeProvider, FakeTransport, dump_capture_jsonl
from reqfold.fakes.dialects import registry
from reqfold.fakes.dialects.chat_dialect import ChatDialect
from reqfold.fakes.dialects.messages_dialect import MessagesDialect
from reqfold.fakes.dialects.openai_chat import ChatFlavour
from reqfold.fakes.dialects.registry import (
    ANTHROPIC,
    OPENAI,
    OPENAI_RESPONSES,
    REGISTRY,
    DialectRow,
)
from reqfold.fakes.dialects.responses_dialect import ResponsesDialect

ACME = dataclasses.replace(OPENAI, dialect="acme", models=("acme-1",))
ACME_ROW = DialectRow(
    ACME,
    ChatDialect(
        flavour=ChatFlavour(
            uuid_ids=False,
            hit_miss_usage=False,
            reasoning_content=False,
            empty_content=False,
        ),
        unknown_status=404,
        unknown_code="model_not_found",
        unknown_wording="no {model}",
    ),
)
BEDROCK = dataclasses.replace(ANTHROPIC, dialect="bedrock-messages")
BEDROCK_ROW = DialectRow(BEDROCK, MessagesDialect(paths=("/model/invoke",)))
GENERATE = dataclasses.replace(OPENAI_RESPONSES, dialect="generate")
GENERATE_ROW = DialectRow(
    GENERATE, ResponsesDialect(wire="generate wire", paths=("/v1/generate",))
)


@pytest.fixture
def added_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    """The registry with three more rows, as docs/fake-provider.md adds one."""
    rows = (*REGISTRY, ACME_ROW, BEDROCK_ROW, GENERATE_ROW)
    monkeypatch.setattr(registry, "REGISTRY", rows)
    monkeypatch.setattr(registry, "DIALECTS", {row.name: row.speaks for row in rows})


@pytest.mark.usefixtures("added_rows")
def test_a_third_chat_provider_is_judged_under_its_own_row() -> None:
    body = {"model": "acme-1", "messages": []}
    assert choose_profile("/v1/chat/completions", body, None) is ACME
    usage = {"prompt_tokens": 9, "prompt_tokens_details": {"cached_tokens": 0}}
    assert choose_profile("/v1/chat/completions", body, usage) is ACME
    deepseek_usage = {"prompt_cache_hit_tokens": 0}
    deepseek = choose_profile("/v1/chat/completions", body, deepseek_usage)
    assert deepseek is registry.PROFILES["deepseek"]


def test_the_shipped_chat_rows_are_told_apart_as_before() -> None:
    chat = "/chat/completions"
    assert choose_profile(chat, {"model": "gpt-4o"}, None) is OPENAI
    assert choose_profile(chat, {"model": "x"}, None) is REGISTRY[0].profile
    said_openai = {"prompt_tokens_details": {"cached_tokens": 0}}
    assert choose_profile(chat, {"model": "deepseek-chat"}, said_openai) is OPENAI


@pytest.mark.usefixtures("added_rows")
def test_a_second_messages_provider_caches_at_breakpoints_not_in_blocks() -> None:
    assert not caches_in_blocks(BEDROCK)
    assert not caches_in_blocks(ANTHROPIC)
    assert caches_in_blocks(ACME)
    assert caches_in_blocks(OPENAI_RESPONSES)


@pytest.mark.usefixtures("added_rows")
def test_a_new_wire_format_is_counted_as_uncompared_not_dropped() -> None:
    assert path_dialect("/v1/generate") == "generate"
    line = b'{"index": 0, "path": "/v1/generate", "body": {"input": "hi"}}\n'
    uncompared: Counter[str] = Counter()
    assert list(read_captures([line], uncompared=uncompared)) == []
    assert uncompared == Counter({"generate": 1})


def judged_on(path: str) -> CacheJudgement:
    """Two Anthropic requests a day apart (the date after the only cache
    breakpoint), served on `path`, judged with their process starts."""
    provider = FakeProvider("anthropic")
    client = httpx.Client(transport=FakeTransport(provider), base_url="http://fake")
    rules = "".join(f"Rule {n}: read a file before you change it.\n" for n in range(60))
    for day in ("2026-12-06", "2026-12-07"):
        system = [
            {"type": "text", "text": rules, "cache_control": {"type": "ephemeral"}},
            {"type": "text", "text": f"Today is {day}.\n"},
        ]
        body = {
            "model": "claude-sonnet-4-5",
            "max_tokens": 100,
            "system": system,
            "messages": [{"role": "user", "content": "hello " * 200}],
        }
        client.post("/v1/messages", json=body)
    lines = [
        json.dumps({**json.loads(line), "path": path})
        for line in dump_capture_jsonl(provider.capture).splitlines()
    ]
    starts = [
        ProcessStart(first_index=0, name="run 1", kind="first"),
        ProcessStart(first_index=1, name="run 2", kind="resume"),
    ]
    return judge_cache(read_capture_lines(lines), starts=starts)


@pytest.mark.spec("CACHE-2")
def test_a_second_messages_providers_capture_is_judged_by_its_breakpoints() -> None:
    anthropic = judged_on("/v1/messages").static
    assert anthropic is not None
    assert anthropic.breakpoint_tokens
    with pytest.MonkeyPatch.context() as patch:
        rows = (*REGISTRY, BEDROCK_ROW)
        patch.setattr(registry, "REGISTRY", rows)
        patch.setattr(registry, "DIALECTS", {row.name: row.speaks for row in rows})
        bedrock = judged_on("/model/invoke").static
    assert bedrock == anthropic

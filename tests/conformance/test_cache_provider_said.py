"""The provider's own cache-miss reason beside reqfold's cause, from requests alone.

A harness that opts in to Anthropic's or the Responses API's cache
diagnostics is told by the provider why a request missed; the fake
answers the same (`reqfold.fakes.native_diagnostics`) and keeps the answer
in its capture. ``reqfold check --requests CAPTURE`` with no log shows it
in the timeline, under the break, and in the JSON. The captures are real:
sent over HTTP to the fake on 127.0.0.1 and read back from
``GET /_fake/requests.jsonl``.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from cli_in_process import reqfold_here

from reqfold.conformance.cache import calls_from_records, judge_cache
from reqfold.conformance.cache.provider_said import provider_said
from reqfold.fakes import FakeProvider
from reqfold.fakes.server import running_server

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
HARNESSES = Path(__file__).parent / "dialect_probe_harnesses"

RULES = "Answer in one word. " * 300
TOOL = {"name": "ls", "description": "List files.", "input_schema": {"type": "object"}}


def anthropic_session(tmp_path: Path) -> Path:
    """Three opted-in requests: the first, one whose system prompt changed
    (the provider: ``system_changed``), one that extends it (no miss); and
    a fourth that extends the third without opting in."""

    def body(
        system: str, turns: int, previous: str | None, *, opt_in: bool = True
    ) -> dict[str, Any]:
        messages: list[dict[str, Any]] = []
        for turn in range(turns):
            messages.append({"role": "user", "content": f"question {turn}"})
            if turn < turns - 1:
                messages.append({"role": "assistant", "content": "ok"})
        request: dict[str, Any] = {
            "model": "claude-sonnet-4-5",
            "max_tokens": 256,
            "system": system,
            "tools": [TOOL],
            "messages": messages,
        }
        if opt_in:
            request["diagnostics"] = {"previous_message_id": previous}
        return request

    fake = FakeProvider("anthropic")
    with running_server(fake) as url, httpx.Client() as client:

        def send(request: dict[str, Any]) -> str:
            answer = client.post(url + "/v1/messages", json=request)
            assert answer.status_code == 200, answer.text
            return str(answer.json()["id"])

        first = send(body("Day 1.\n" + RULES, 1, None))
        second = send(body("Day 2.\n" + RULES, 2, first))
        send(body("Day 2.\n" + RULES, 3, second))
        send(body("Day 2.\n" + RULES, 4, None, opt_in=False))
        capture = client.get(url + "/_fake/requests.jsonl").content
    saved = tmp_path / "anthropic.capture.jsonl"
    saved.write_bytes(capture)
    return saved


@pytest.mark.spec("CACHE-1", "CACHE-2")
def test_the_timeline_shows_what_the_provider_said_beside_reqfolds_cause(
    tmp_path: Path,
) -> None:
    capture = anthropic_session(tmp_path)
    status, out, err = reqfold_here("check", "--requests", str(capture))
    assert status in (0, 1), out + err
    rows = {
        int(line.split()[0]): line
        for line in out.split("timeline:\n", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
    }
    assert "diverged" in rows[1]
    assert "; the provider said: system_changed, " in rows[1]
    assert "tokens missed" in rows[1]
    assert rows[2].rstrip().endswith("append       the provider said: no cache miss")
    assert "the provider said" not in rows[3]  # it did not opt in
    breaks = out.split("breaks:\n", 1)[1]
    assert "    the provider said: system_changed, " in breaks


@pytest.mark.spec("CACHE-1", "CACHE-2")
def test_the_json_gives_what_the_provider_said_per_request_and_per_break(
    tmp_path: Path,
) -> None:
    capture = anthropic_session(tmp_path)
    status, out, _ = reqfold_here(
        "check", "--requests", str(capture), "--format", "json"
    )
    assert status in (0, 1)
    judgement = json.loads(out)
    said = [row["provider_said"] for row in judgement["timeline"]]
    assert said[1] is not None
    assert said[1].startswith("system_changed, ")
    assert said[2:] == ["no cache miss", None]
    [broke] = judgement["breaks"]
    assert broke["index"] == 1
    assert broke["provider_said"] == said[1]


@pytest.mark.spec("CACHE-1")
def test_the_responses_apis_answer_is_read_from_the_fakes_own_records() -> None:
    fake = FakeProvider("openai-responses")
    tools = [{"type": "function", "name": "ls", "parameters": {"type": "object"}}]
    with running_server(fake) as url, httpx.Client() as client:
        answered: list[str] = []
        for turn, extra in enumerate([[], [], [{"type": "function", "name": "cat"}]]):
            request: dict[str, Any] = {
                "model": "gpt-5",
                "instructions": RULES,
                "tools": tools + extra,
                "input": [
                    {"role": "user", "content": f"q{n}"} for n in range(turn + 1)
                ],
                "store": False,
            }
            if answered:
                request["prompt_cache_options"] = {
                    "comparison_response_id": answered[-1]
                }
            answer = client.post(url + "/v1/responses", json=request)
            assert answer.status_code == 200, answer.text
            answered.append(answer.json()["id"])
    judgement = judge_cache(calls_from_records(fake.requests))
    assert 0 not in judgement.provider_said
    assert judgement.provider_said[1] == "cache_hit"
    assert judgement.provider_said[2].startswith("tools_changed, ")


def probe_without_a_log(harness: str, tmp_path: Path) -> tuple[int, str]:
    """``reqfold probe --dialect anthropic`` of a dialect harness that opts in
    to the provider's diagnostics, told of no log (its log goes to a folder
    the probe does not know), paced by its prompt."""
    command = (
        f"{shlex.quote(sys.executable)} {shlex.quote(str(HARNESSES / harness))}"
        f" --log-dir {shlex.quote(str(tmp_path))}"
    )
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    status, out, err = reqfold_here(
        *("probe", "--dialect", "anthropic", "--ready", "> ", "--cmd", command),
        *("--base-url-env", "OPENAI_BASE_URL", "--api-key-env", "OPENAI_API_KEY"),
        env={"PYTHONPATH": path},
    )
    assert "the cache is judged from the requests alone" in out, out + err
    return status, out


@pytest.mark.spec("CACHE-1")
def test_the_probe_without_a_log_shows_the_providers_reason_where_the_cache_broke(
    tmp_path: Path,
) -> None:
    status, out = probe_without_a_log("anthropic_clock_chat.py", tmp_path)
    assert status == 1
    broke = [line for line in out.splitlines() if " diverged " in line]
    assert len(broke) == 2
    for line in broke:
        assert "system-edited; the provider said: system_changed, " in line
    assert out.count("    the provider said: system_changed, ") == 2


@pytest.mark.spec("CACHE-1")
def test_the_probe_without_a_log_shows_the_provider_agreeing_with_a_clean_append(
    tmp_path: Path,
) -> None:
    status, out = probe_without_a_log("anthropic_chat.py", tmp_path)
    assert status == 0, out
    appended = [line for line in out.splitlines() if " append " in line]
    assert len(appended) == 2
    for line in appended:
        assert line.endswith("append       the provider said: no cache miss")
    assert "breaks:" not in out


def test_the_providers_words_are_read_from_either_dialects_answer() -> None:
    anthropic_miss = {
        "diagnostics": {
            "cache_miss_reason": {
                "type": "model_changed",
                "cache_missed_input_tokens": 120,
            }
        }
    }
    assert provider_said(anthropic_miss) == "model_changed, 120 tokens missed"
    assert provider_said({"diagnostics": None}) == "no cache miss"
    responses_miss = {
        "prompt_cache_diagnostics": {
            "type": "cache_miss",
            "reason": "input_changed",
            "cache_missed_tokens": 7,
        }
    }
    assert provider_said(responses_miss) == "input_changed, 7 tokens missed"
    assert provider_said({"prompt_cache_diagnostics": {"type": "cache_hit"}}) == (
        "cache_hit"
    )
    assert provider_said(None) is None
    assert provider_said({"prompt_cache_diagnostics": None}) is None

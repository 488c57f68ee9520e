"""The cache judgement, in process: requests sent to the fake, judged alone."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from cache_sessions import SYSTEM, TOOLS, Session

from reqfold.conformance.cache import (
    ProcessStart,
    cache_status,
    judge_cache,
    judgement_json,
    read_capture_lines,
    render_text,
)
from reqfold.conformance.cache.echo import NOT_APPLICABLE, echo_difference
from reqfold.conformance.cache.prompts import render
from reqfold.conformance.outcomes import Outcome
from reqfold.fakes import FakeProvider, FakeTransport, dump_capture_jsonl
from reqfold.fakes.dialects.base import cache_rule
from reqfold.fakes.dialects.message_memo import MessagePrefixMemo
from reqfold.fakes.tokenizer import SegmentEncoder


def starts(*pairs: tuple[int, str]) -> list[ProcessStart]:
    return [
        ProcessStart(first_index=index, name=f"run {n}", kind=kind)  # type: ignore[arg-type]
        for n, (index, kind) in enumerate(pairs, start=1)
    ]


@pytest.mark.spec("CACHE-1")
def test_an_append_only_session_is_conformant_with_nothing_lost() -> None:
    session = Session()
    for n in range(4):
        session.turn(f"turn {n}")
    judgement = judge_cache(read_capture_lines(session.lines()))
    assert [row.relation for row in judgement.rows] == ["first"] + ["append"] * 3
    assert judgement.breaks == []
    assert judgement.lost_tokens == 0
    assert [s.name for s in judgement.streams] == ["main"]
    assert cache_status(judgement) == 0
    assert judgement.findings[0].outcome is Outcome.PASS


@pytest.mark.spec("CACHE-1", "STREAM-5")
def test_history_rewritten_in_one_process_fails_with_its_cause_and_tokens_lost() -> (
    None
):
    session = Session()
    for n in range(3):
        session.turn(f"turn {n}")
    session.messages[1] = {"role": "assistant", "content": "edited afterwards"}
    session.turn("turn 3")
    judgement = judge_cache(read_capture_lines(session.lines()))
    (broken,) = judgement.breaks
    assert (broken.index, broken.previous, broken.cause) == (3, 2, "message-edited")
    assert broken.rules == ("CACHE-1",)
    assert broken.expected is None
    previous_prompt, _ = session.reported(2)
    prompt, cached = session.reported(3)
    profile = session.provider.profile
    pure_append = cache_rule(profile, previous_prompt, prompt, "deepseek-chat")
    assert broken.lost == pure_append - cached > 0
    assert cache_status(judgement) == 1
    assert "message-edited" in render_text(judgement)


@pytest.mark.spec("STREAM-1")
def test_a_side_request_with_its_own_opening_is_a_side_stream_not_a_break() -> None:
    session = Session()
    session.turn("turn 0")
    title = [{"role": "user", "content": "Write a title for: turn 0"}]
    saved, session.system, session.tools = session.system, "You write titles.", []
    session.send(title)
    session.system, session.tools = saved, list(TOOLS)
    session.turn("turn 1")
    judgement = judge_cache(read_capture_lines(session.lines()))
    assert [(row.stream, row.relation) for row in judgement.rows] == [
        ("main", "first"),
        ("side 1", "new-opening"),
        ("main", "append"),
    ]
    assert judgement.breaks == []
    main, side = judgement.streams
    assert main.share > 0.9
    assert side.share == pytest.approx(1 - main.share)
    assert cache_status(judgement, strict=True) == 0


@pytest.mark.spec("CACHE-3", "CACHE-2")
def test_a_date_moved_on_resume_is_a_warning_naming_the_date() -> None:
    session = Session()
    session.turn("turn 0")
    session.turn("turn 1")
    session.system = SYSTEM.replace("2026-12-06", "2026-12-07")
    session.turn("turn 2")
    judgement = judge_cache(
        read_capture_lines(session.lines()), starts=starts((0, "first"), (2, "resume"))
    )
    (broken,) = judgement.breaks
    assert broken.cause == "date-time"
    assert broken.across == "resume"
    assert broken.rules == ("CACHE-3", "CACHE-2")
    assert "2026-12-06" in broken.earlier
    assert "2026-12-07" in broken.current
    outcomes = {f.id: f.outcome for f in judgement.findings}
    assert outcomes["cache/main-extends"] is Outcome.PASS
    assert outcomes["cache/resume-extends"] is Outcome.WARN
    assert cache_status(judgement) == 0
    assert cache_status(judgement, strict=True) == 1


@pytest.mark.spec("STREAM-5")
def test_a_declared_break_and_a_model_change_are_expected_not_failures() -> None:
    session = Session()
    session.turn("turn 0")
    session.messages[0]["content"] = "changed by a compaction the driver forced"
    session.turn("turn 1")
    session.model = "deepseek-reasoner"
    session.turn("turn 2")
    judgement = judge_cache(
        read_capture_lines(session.lines()), expected={1: "compaction"}
    )
    assert [(b.index, b.expected) for b in judgement.breaks] == [
        (1, "compaction"),
        (2, "recognised: model-change"),
    ]
    assert judgement.lost_tokens == 0
    assert cache_status(judgement) == 0


@pytest.mark.spec("STREAM-4")
def test_an_assistant_turn_re_sent_changed_is_an_echo_warning() -> None:
    session = Session()
    session.messages.append({"role": "user", "content": "hello"})
    answer = session.send()
    session.messages.append({"role": "assistant", "content": answer["content"] + "!"})
    session.turn("turn 1")
    judgement = judge_cache(read_capture_lines(session.lines()))
    (echo,) = judgement.echoes
    assert (echo.index, echo.previous, echo.field) == (1, 0, "messages[2].content")
    assert echo.echoed.endswith("!")
    assert not echo.returned.endswith("!")
    finding = next(f for f in judgement.findings if f.id == "cache/echo-fidelity")
    assert finding.outcome is Outcome.WARN
    assert finding.rules == ("STREAM-4",)


@pytest.mark.spec("CACHE-1")
def test_the_gates_fail_a_run_the_spec_lets_pass() -> None:
    session = Session()
    session.turn("turn 0")
    session.system = SYSTEM.replace("2026-12-06", "2026-12-07")
    session.turn("turn 1")
    lines = list(session.lines())
    plain = judge_cache(
        read_capture_lines(lines), starts=starts((0, "first"), (1, "resume"))
    )
    assert cache_status(plain) == 0
    gated = judge_cache(
        read_capture_lines(lines),
        starts=starts((0, "first"), (1, "resume")),
        fail_on=("date-time",),
        max_lost_tokens=plain.lost_tokens,
    )
    outcomes = {f.id: f.outcome for f in gated.findings}
    assert outcomes["gate/fail-on"] is Outcome.FAIL
    assert outcomes["gate/max-lost-tokens"] is Outcome.PASS
    tighter = judge_cache(
        read_capture_lines(lines),
        max_lost_tokens=plain.lost_tokens - 1,
        starts=starts((0, "first"), (1, "resume")),
    )
    assert cache_status(tighter) == 1


def test_the_json_form_holds_every_member_and_the_totals() -> None:
    session = Session()
    session.turn("turn 0")
    session.turn("turn 1")
    document = judgement_json(judge_cache(read_capture_lines(session.lines())))
    assert set(document) >= {"streams", "breaks", "timeline", "findings", "lost_tokens"}
    assert document["timeline"][1]["relation"] == "append"
    assert document["findings"][0]["outcome"] == "pass"


@pytest.mark.spec("STREAM-2", "CACHE-2")
def test_a_fresh_session_that_changes_a_per_session_id_loses_its_opening() -> None:
    session = Session()
    session.system = "Session: 0f3c2a9b71d4\n" + SYSTEM
    session.turn("turn 0")
    session.turn("turn 1")
    session.system = "Session: 7be1d04c88a2\n" + SYSTEM
    session.messages = []
    session.turn("a new task")
    judgement = judge_cache(
        read_capture_lines(session.lines()), starts=starts((0, "first"), (2, "fresh"))
    )
    (broken,) = judgement.breaks
    assert broken.across == "fresh"
    assert broken.cause == "nonce"
    assert broken.rules == ("STREAM-2", "CACHE-2")
    assert broken.lost > 0
    assert judgement.static is not None
    assert 0 < judgement.static.static_tokens < judgement.static.opening_tokens
    finding = next(
        f for f in judgement.findings if f.id == "cache/fresh-session-keeps-opening"
    )
    assert finding.outcome is Outcome.WARN


@pytest.mark.spec("STREAM-2")
def test_a_fresh_session_that_keeps_its_opening_passes() -> None:
    session = Session()
    session.turn("turn 0")
    session.messages = []
    session.turn("a new task")
    judgement = judge_cache(
        read_capture_lines(session.lines()), starts=starts((0, "first"), (1, "fresh"))
    )
    assert judgement.breaks == []
    assert [row.relation for row in judgement.rows] == ["first", "fresh"]
    assert judgement.static is not None
    assert judgement.static.static_tokens == judgement.static.opening_tokens > 0


def memories(of: str) -> list[dict[str, str]]:
    """A memory extractor's conversation: the turn, then an instruction."""
    return [
        {"role": "user", "content": f"memories of {of} " + "x " * 40},
        {"role": "assistant", "content": "noted"},
        {"role": "user", "content": "save the ones worth keeping"},
    ]


@pytest.mark.spec("STREAM-3", "STREAM-1")
def test_a_side_stream_rewriting_itself_warns_and_leaves_the_main_one_alone() -> None:
    session = Session()
    session.turn("turn 0")
    saved = session.system, session.tools
    session.system, session.tools = "You extract memories.\nBe short.", []
    session.send(memories("turn 0"))
    session.system, session.tools = saved
    session.turn("turn 1")
    session.system, session.tools = "You extract memories.\nBe short.", []
    session.send(memories("turn 1"))
    judgement = judge_cache(read_capture_lines(session.lines()))
    (broken,) = judgement.breaks
    assert (broken.index, broken.stream, broken.rules) == (3, "side 1", ("STREAM-3",))
    outcomes = {f.id: f.outcome for f in judgement.findings}
    assert outcomes["cache/main-extends"] is Outcome.PASS
    assert outcomes["cache/side-streams-extend"] is Outcome.WARN


@pytest.mark.spec("CACHE-1")
def test_one_request_per_process_leaves_cache_1_unjudged_not_passed() -> None:
    session = Session()
    session.turn("turn 0")
    session.turn("turn 1")
    judgement = judge_cache(
        read_capture_lines(session.lines()), starts=starts((0, "first"), (1, "resume"))
    )
    finding = next(f for f in judgement.findings if f.id == "cache/main-extends")
    assert finding.outcome is Outcome.SKIP
    assert "no two requests" in finding.message


@pytest.mark.spec("STREAM-1")
def test_a_side_request_sent_before_the_first_main_one_leaves_main_first() -> None:
    session = Session()
    saved = session.system, session.tools
    session.system, session.tools = "You write titles.", []
    session.send([{"role": "user", "content": "Title for: fix the bug"}])
    session.system, session.tools = saved
    session.turn("fix the bug")
    session.turn("and test it")
    judgement = judge_cache(read_capture_lines(session.lines()))
    assert [(r.stream, r.relation, r.cause) for r in judgement.rows] == [
        ("side 1", "new-opening", "new-opening"),
        ("main", "first", ""),
        ("main", "append", ""),
    ]


def anthropic_session(echo: str | None, tomorrow: bool = False) -> list[str]:
    """Two Messages API turns; the assistant turn re-sent as `echo` (None: as
    the fake returned it); with `tomorrow`, the second has the next day's
    date in its system text."""
    provider = FakeProvider("anthropic")
    client = httpx.Client(transport=FakeTransport(provider), base_url="http://fake")
    system = [
        {"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}},
    ]
    tools = [{"name": "read", "description": "Read a file. " * 30, "input_schema": {}}]
    mark = {"cache_control": {"type": "ephemeral"}}
    first = {"type": "text", "text": "hello " * 500, **mark}
    messages: list[Any] = [{"role": "user", "content": [first]}]

    def send() -> Any:
        body = {
            "model": "claude-sonnet-4-5",
            "max_tokens": 100,
            "system": system,
            "tools": tools,
            "messages": messages,
        }
        return client.post("/v1/messages", json=body).json()

    reply = send()
    content: Any = reply["content"] if echo is None else echo
    messages.append({"role": "assistant", "content": content})
    messages.append({"role": "user", "content": "and then?"})
    if tomorrow:
        system[0] = {**system[0], "text": SYSTEM.replace("12-06", "12-07")}
    send()
    return dump_capture_jsonl(provider.capture).splitlines()


@pytest.mark.spec("STREAM-4")
def test_an_anthropic_echo_is_judged_block_by_block_and_a_string_is_one_block() -> None:
    faithful = judge_cache(read_capture_lines(anthropic_session(None)))
    assert faithful.echoes == []
    assert [row.relation for row in faithful.rows] == ["first", "append"]
    returned = anthropic_session(None)[0]
    text = json.loads(returned)["reply"]["content"][0]["text"]
    shorthand = judge_cache(read_capture_lines(anthropic_session(text)))
    assert shorthand.echoes == []
    changed = judge_cache(read_capture_lines(anthropic_session(text + "!")))
    (echo,) = changed.echoes
    assert echo.field.startswith("messages[1].content")
    assert echo.echoed.endswith("!")


def test_the_static_opening_says_what_an_anthropic_breakpoint_covers() -> None:
    judgement = judge_cache(read_capture_lines(anthropic_session(None)))
    static = judgement.static
    assert static is not None
    assert static.breakpoint_tokens == static.opening_tokens > 0


@pytest.mark.spec("CACHE-1", "CACHE-2")
def test_anthropic_tokens_lost_follow_the_breakpoints_the_previous_request_wrote() -> (
    None
):
    lines = anthropic_session(None, tomorrow=True)
    judgement = judge_cache(read_capture_lines(lines))
    (broken,) = judgement.breaks
    assert broken.cause == "date-time"
    first, second = (json.loads(line)["usage"] for line in lines)
    previous_prompt = first["cache_creation_input_tokens"] + first["input_tokens"]
    assert broken.lost == previous_prompt - second["cache_read_input_tokens"]


def test_an_anthropic_thinking_budget_changed_is_a_parameters_break() -> None:
    provider = FakeProvider("anthropic")
    client = httpx.Client(transport=FakeTransport(provider), base_url="http://fake")
    body: dict[str, Any] = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 4000,
        "system": SYSTEM,
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "messages": [{"role": "user", "content": "hello " * 300}],
    }
    client.post("/v1/messages", json=body)
    body["thinking"] = {"type": "enabled", "budget_tokens": 2048}
    client.post("/v1/messages", json=body)
    judgement = judge_cache(
        read_capture_lines(dump_capture_jsonl(provider.capture).splitlines())
    )
    (broken,) = judgement.breaks
    assert broken.cause == "parameters"
    assert "1024" in broken.earlier
    assert "2048" in broken.current


@pytest.mark.spec("CACHE-1", "STREAM-5")
def test_a_harness_that_never_sends_its_history_fails_and_is_not_a_clear() -> None:
    session = Session()
    for n in range(4):
        session.messages = []
        session.turn(f"turn {n}")
    judgement = judge_cache(read_capture_lines(session.lines()))
    assert len(judgement.breaks) == 3
    assert all(b.expected is None for b in judgement.breaks)
    assert "conversation-cleared" not in {b.cause for b in judgement.breaks}
    main = next(f for f in judgement.findings if f.id == "cache/main-extends")
    assert main.outcome is Outcome.FAIL
    assert cache_status(judgement) == 1


@pytest.mark.spec("CACHE-1", "STREAM-5")
def test_a_clear_after_a_conversation_is_expected_and_the_pass_says_so() -> None:
    session = Session()
    session.turn("turn 0")
    session.turn("turn 1")
    session.messages = []
    session.turn("turn 2")
    judgement = judge_cache(read_capture_lines(session.lines()))
    (cleared,) = judgement.breaks
    assert cleared.cause == "conversation-cleared"
    assert cleared.expected is not None
    main = next(f for f in judgement.findings if f.id == "cache/main-extends")
    assert main.outcome is Outcome.PASS
    assert main.message.endswith("extends the previous one, or breaks as expected (1)")


@pytest.mark.spec("CACHE-3")
def test_a_resumed_process_that_drops_the_conversation_is_not_excused_as_a_clear() -> (
    None
):
    session = Session()
    session.turn("turn 0")
    session.turn("turn 1")
    session.messages = []
    session.turn("turn 2")
    judgement = judge_cache(
        read_capture_lines(session.lines()), starts=starts((0, "first"), (2, "resume"))
    )
    (broken,) = judgement.breaks
    assert broken.across == "resume"
    assert broken.cause != "conversation-cleared"
    assert broken.expected is None
    resume = next(f for f in judgement.findings if f.id == "cache/resume-extends")
    assert resume.outcome is Outcome.WARN


@pytest.mark.spec("STREAM-4")
def test_a_reply_re_sent_under_another_role_is_an_echo_warning() -> None:
    session = Session()
    session.messages.append({"role": "user", "content": "hello"})
    answer = session.send()
    session.messages.append({"role": "user", "content": answer["content"]})
    session.turn("turn 1")
    judgement = judge_cache(read_capture_lines(session.lines()))
    (echo,) = judgement.echoes
    assert (echo.index, echo.field) == (1, "messages[2].role")
    assert (echo.returned, echo.echoed) == ("assistant", "user")
    finding = next(f for f in judgement.findings if f.id == "cache/echo-fidelity")
    assert finding.outcome is Outcome.WARN


@pytest.mark.spec("STREAM-4")
def test_a_conversation_grown_without_the_reply_is_not_counted_as_re_sent() -> None:
    session = Session()
    session.turn("turn 0")
    session.turn("turn 1")
    session.messages.pop()  # the reply to turn 1 is left out
    session.turn("turn 2")
    judgement = judge_cache(read_capture_lines(session.lines()))
    (echo,) = judgement.echoes
    assert (echo.index, echo.field, echo.echoed) == (2, "messages[4].role", "user")
    finding = next(f for f in judgement.findings if f.id == "cache/echo-fidelity")
    assert finding.outcome is Outcome.WARN
    assert "re-sent byte for byte" not in finding.message


@pytest.mark.spec("STREAM-4")
def test_echo_fidelity_tells_not_applicable_from_a_match() -> None:
    session = Session()
    session.turn("turn 0")
    session.send(session.messages[:1])  # request 0 again: nothing appended
    session.turn("turn 1")
    calls = list(read_capture_lines(session.lines()))
    encoder = SegmentEncoder()
    memo = MessagePrefixMemo(max_prompts=4, max_bytes=1 << 20)
    prompts = [
        render(c.index, c.path, c.body, encoder, memo, usage=c.usage, reply=c.reply)
        for c in calls
    ]
    first, again, appended = prompts
    assert first is not None
    assert again is not None
    assert appended is not None
    assert echo_difference(first, again) is NOT_APPLICABLE
    assert echo_difference(again, appended) is None
    judgement = judge_cache(read_capture_lines(session.lines()))
    finding = next(f for f in judgement.findings if f.id == "cache/echo-fidelity")
    assert finding.message == "1 assistant turn(s) re-sent byte for byte"


@pytest.mark.parametrize(
    "usage",
    [
        {"prompt_tokens": 10, "prompt_cache_hit_tokens": True},
        {"input_tokens": 10, "cache_read_input_tokens": True},
        {"prompt_tokens": 10, "prompt_tokens_details": {"cached_tokens": True}},
        {"input_tokens": 10, "cache_creation_input_tokens": True},
    ],
)
def test_a_boolean_in_the_usage_is_not_read_as_a_token_count(
    usage: dict[str, Any],
) -> None:
    body: dict[str, Any] = {
        "model": "deepseek-chat",
        "messages": [{"role": "user", "content": "hello"}],
    }
    prompt = render(
        0,
        "/chat/completions",
        body,
        SegmentEncoder(),
        MessagePrefixMemo(max_prompts=4, max_bytes=1 << 20),
        usage=usage,
    )
    assert prompt is not None
    assert prompt.cached is None
    assert prompt.written is None


def test_the_judgement_measures_prefixes_with_the_fakes_own_function() -> None:
    from reqfold.conformance.cache import prompts, streams
    from reqfold.fakes import diagnostics

    assert prompts.common_prefix is diagnostics.common_prefix
    assert streams.common_prefix is diagnostics.common_prefix


def test_the_verdict_line_is_coloured_only_when_asked_as_every_command_does() -> None:
    session = Session()
    session.turn("turn 0")
    session.turn("turn 1")
    judgement = judge_cache(read_capture_lines(session.lines()))
    plain = render_text(judgement).splitlines()[-1]
    coloured = render_text(judgement, colour=True).splitlines()[-1]
    assert plain == "Verdict: CONFORMANT"
    assert coloured.startswith("Verdict: \x1b[")
    assert "CONFORMANT" in coloured
    assert coloured != plain

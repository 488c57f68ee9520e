"""The reconstruction theorem: captured requests against what the log rebuilds."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from reqfold.conformance.check import (
    CaptureUnreadable,
    check_lines,
    read_captures,
    render_text,
)
from reqfold.conformance.check.findings import SHOULD, finding
from reqfold.conformance.check.log_rules import LogChecker
from reqfold.conformance.check.reconstruction import first_difference
from reqfold.conformance.check.turn_rules import OpenStep
from reqfold.reference.request import build_chat_body, request_messages
from reqfold.reference.session_log import SessionLog
from reqfold.reference.shells.jsonl import dump_line, make_storage_line

FIXTURES = Path(__file__).parent / "check_fixtures"
LOG = FIXTURES / "valid" / "session-prefix.jsonl"
CAPTURES = FIXTURES / "requests"
HEADER = {"config": {"model": "m"}, "system": "s", "tools": []}


def capture_lines(name: str) -> list[bytes]:
    return (CAPTURES / name).read_bytes().splitlines(keepends=True)


def check_with(captures: list[bytes]):  # type: ignore[no-untyped-def]
    return check_lines(
        LOG.read_bytes().splitlines(keepends=True),
        captures=read_captures(captures),
    )


@pytest.mark.spec("REQ-1", "REQ-2", "REQ-5", "REQ-6", "WIRE-1", "WIRE-2", "WIRE-3")
def test_matching_capture_equals_what_the_log_rebuilds() -> None:
    report = check_with(capture_lines("session-prefix.capture.jsonl"))
    assert report.findings == []
    assert report.summary.requests_matched == 4


@pytest.mark.spec("REQ-1", "REQ-5")
def test_tampered_message_is_reported_at_its_step_with_the_differing_path() -> None:
    report = check_with(capture_lines("session-prefix.tampered-message.capture.jsonl"))
    [finding] = report.findings
    assert (finding.rule, finding.line, finding.seq) == ("REQ-1", 32, 30)
    assert "messages[6].content" in finding.message
    assert finding.expected == '"Read a.py please."'
    assert finding.found == '"Read b.py please."'


@pytest.mark.spec("WIRE-3", "REQ-6")
def test_tampered_tool_list_is_reported_as_a_tools_difference() -> None:
    report = check_with(capture_lines("session-prefix.tampered-tools.capture.jsonl"))
    [finding] = report.findings
    assert (finding.rule, finding.line) == ("WIRE-3", 17)
    assert "tools[1]" in finding.message
    assert finding.found == "<absent>"


@pytest.mark.spec("CHECK-1")
def test_a_missing_capture_is_reported_at_the_step_that_dispatched() -> None:
    report = check_with(capture_lines("session-prefix.capture.jsonl")[:3])
    [finding] = report.findings
    assert finding.rule == "CHECK-1"
    assert finding.line == 49  # turn 3's step/start


@pytest.mark.spec("CHECK-1")
def test_an_extra_capture_is_reported_at_the_end() -> None:
    lines = capture_lines("session-prefix.capture.jsonl")
    report = check_with([*lines, lines[-1]])
    [finding] = report.findings
    assert finding.rule == "CHECK-1"
    assert "1 captured request" in finding.message


@pytest.mark.spec("REQ-1", "WIRE-5")
def test_plain_bodies_are_accepted_and_deployment_settings_ignored() -> None:
    bodies = []
    for line in capture_lines("session-prefix.capture.jsonl"):
        body = json.loads(line)["body"]
        body["stream"] = False
        body["reasoning_effort"] = "high"
        bodies.append(json.dumps(body).encode() + b"\n")
    report = check_with(bodies)
    assert report.findings == []


def test_captured_requests_to_other_paths_are_skipped() -> None:
    other = json.dumps({"index": 9, "path": "/models", "body": {}}).encode() + b"\n"
    lines = capture_lines("session-prefix.capture.jsonl")
    report = check_with([other, *lines])
    assert report.findings == []


def test_a_request_the_fake_refused_unread_as_too_large_is_skipped() -> None:
    refused = {"index": 9, "path": "/chat/completions", "status": 413, "body": None}
    lines = capture_lines("session-prefix.capture.jsonl")
    report = check_with([*lines, json.dumps(refused).encode() + b"\n"])
    assert report.findings == []
    # a scripted 413 fault was read whole: it is compared (and matches nothing)
    scripted = {**refused, "body": {"model": "m", "messages": []}}
    report = check_with([*lines, json.dumps(scripted).encode() + b"\n"])
    assert [f.rule for f in report.findings] == ["CHECK-1"]


@pytest.mark.spec("WIRE-5")
def test_member_order_alone_is_a_warning() -> None:
    lines = []
    for line in capture_lines("session-prefix.capture.jsonl"):
        record = json.loads(line)
        body = record["body"]
        record["body"] = {"messages": body.pop("messages"), **body}
        lines.append(json.dumps(record).encode() + b"\n")
    report = check_with(lines)
    assert {(f.rule, f.level) for f in report.findings} == {("WIRE-5", "SHOULD")}
    assert report.ok


def test_an_unreadable_capture_line_raises() -> None:
    with pytest.raises(CaptureUnreadable, match="line 2"):
        check_with([capture_lines("session-prefix.capture.jsonl")[0], b"{oops\n"])


@pytest.mark.spec("JSON-2", "JSON-3")
@pytest.mark.parametrize(
    ("expected", "found", "path", "order_only"),
    [
        ({"a": [1, 2]}, {"a": [1, 3]}, "a[1]", False),
        ({"a": 1}, {"a": 1.0}, None, False),
        ({"a": True}, {"a": 1}, "a", False),
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}, "$", True),
        ({"a": 1}, {"a": 1, "z": None}, "z", False),
        ([1], [1, 2], "[1]", False),
    ],
)
def test_first_difference_compares_json_values(
    expected: object, found: object, path: str | None, order_only: bool
) -> None:
    difference = first_difference(expected, found)
    if path is None:
        assert difference is None
    else:
        assert difference is not None
        assert (difference.path, difference.order_only) == (path, order_only)


def ambiguous_log() -> tuple[list[bytes], list[dict[str, object]]]:
    """Turn 2's step has no header event and no response (anchor-spec 11.15)."""
    header = {"config": {"model": "m"}, "system": "Be brief."}
    events: list[tuple[str, dict[str, object], object]] = []

    def turn(n: int, text: str, *, snapshot: bool, respond: bool) -> None:
        events.append(("turn/start", {"turn": n, "trigger": {"kind": "message"}}, None))
        content = [{"type": "text", "text": text}]
        events.append(("user/message", {"content": content}, "append"))
        events.append(("step/start", {"turn": n, "step": 1}, None))
        if snapshot:
            events.append(
                ("request/header", {"header": header, "reason": "initial"}, None)
            )
        if respond:
            events.append(("assistant/message", {"content": content}, "append"))
        events.append(("step/end", {"turn": n, "step": 1}, None))
        events.append(("turn/end", {"turn": n, "reason": {"kind": "completed"}}, None))

    turn(1, "one", snapshot=True, respond=True)
    turn(2, "two", snapshot=False, respond=False)
    turn(3, "three", snapshot=False, respond=True)
    lines = [json.dumps({"type": "session", "version": 0, "id": "s", "createdAt": 0})]
    for seq, (kind, data, op) in enumerate(events):
        event: dict[str, object] = {"type": kind, "seq": seq, "time": seq, "data": data}
        if op is not None:
            event["surfaceOp"] = op
        lines.append(json.dumps(event, separators=(",", ":")))
    encoded = [line.encode() + b"\n" for line in lines]

    def body(*texts: str) -> dict[str, object]:
        history: list[dict[str, object]] = []
        for text in texts:
            history.append({"role": "user", "content": text})
            if text != "two":
                history.append({"role": "assistant", "content": text})
        if texts[-1] != "two":
            history.pop()
        messages = [{"role": "system", "content": "Be brief."}, *history]
        return {"model": "m", "messages": messages}

    return encoded, [body("one"), body("one", "two"), body("one", "two", "three")]


def test_a_step_with_neither_header_event_nor_response_is_matched_only_if_equal() -> (
    None
):
    log, (first, second, third) = ambiguous_log()
    without = [json.dumps(b).encode() for b in (first, third)]
    report = check_lines(log, captures=read_captures(without))
    assert report.findings == []
    assert report.summary.requests_matched == 2
    with_it = [json.dumps(b).encode() for b in (first, second, third)]
    report = check_lines(log, captures=read_captures(with_it))
    assert report.findings == []
    assert report.summary.requests_matched == 3


@pytest.mark.spec("CHECK-1", "REQ-1")
def test_a_maybe_sent_step_takes_a_capture_only_if_it_is_its_rebuild() -> None:
    from reqfold.reference.reconstruct import compare_with_captures, rebuild_requests
    from reqfold.reference.session_log import SessionLog

    log = SessionLog()
    log.append("turn/start", {"turn": 1}, time=0)
    log.append(
        "user/message",
        {"content": [{"type": "text", "text": "hi"}]},
        time=0,
        surface_op="append",
    )
    log.append("step/start", {"turn": 1, "step": 1}, time=0)
    log.append(
        "request/header",
        {"header": {"config": {"model": "m"}}, "reason": "initial"},
        time=0,
    )
    log.append("step/end", {"turn": 1, "step": 1}, time=0)
    log.append("turn/end", {"turn": 1, "reason": {"kind": "aborted"}}, time=0)
    (rebuilt,) = rebuild_requests(log.events)
    assert rebuilt.evidence == "header"
    assert not rebuilt.sent
    sent = rebuilt.body()
    assert compare_with_captures(log.events, []) == []
    assert compare_with_captures(log.events, [sent]) == []
    wrong = {**sent, "model": "other"}
    assert compare_with_captures(log.events, [wrong]) == [
        "1 captured request(s) match no step of the log"
    ]


def _edited_log(number: int, old: bytes, new: bytes) -> list[bytes]:
    lines = LOG.read_bytes().splitlines(keepends=True)
    assert old in lines[number - 1]
    lines[number - 1] = lines[number - 1].replace(old, new, 1)
    return lines


@pytest.mark.spec("CHECK-1", "REQ-1")
def test_a_step_whose_header_is_unknown_still_takes_its_capture() -> None:
    # Turn 2's snapshot cannot be folded (CONFIG-1): its step sent a request
    # the log cannot rebuild, and turn 3 must still meet its own capture.
    lines = _edited_log(33, b'"model":"deepseek-chat"', b'"model":1')
    report = check_lines(
        lines, captures=read_captures(capture_lines("session-prefix.capture.jsonl"))
    )
    assert [(f.rule, f.line) for f in report.findings] == [("CONFIG-1", 33)]


@pytest.mark.spec("DERIVE-2", "CHECK-2")
def test_surface_content_that_is_not_a_list_of_blocks_is_reported_once() -> None:
    lines = _edited_log(
        3,
        b'"content":[{"type":"text","text":"What files are there?"}]',
        b'"content":true',
    )
    report = check_lines(
        lines, captures=read_captures(capture_lines("session-prefix.capture.jsonl"))
    )
    assert [(f.rule, f.line) for f in report.findings] == [("DERIVE-2", 3)]


@pytest.mark.spec("JSON-1", "CHECK-2")
def test_a_lone_surrogate_key_in_a_header_is_json_1_not_a_checker_failure() -> None:
    lines = _edited_log(5, b'"config":{', b'"config":{"\\ud800":1,')
    report = check_lines(
        lines, captures=read_captures(capture_lines("session-prefix.capture.jsonl"))
    )
    assert {(f.rule, f.line) for f in report.findings} == {("JSON-1", 5)}


@pytest.mark.spec("REQ-1", "WIRE-2")
def test_an_expected_null_is_reported_as_null_not_left_out() -> None:
    """An assistant message with neither text nor tool calls is sent with
    ``content: null``; a capture that sends ``""`` instead shows ``null``."""
    log = SessionLog()
    bodies = []
    for turn in (1, 2):
        log.append("turn/start", {"turn": turn}, time=0)
        log.append(
            "user/message",
            {"content": [{"type": "text", "text": f"q{turn}"}]},
            time=0,
            surface_op="append",
        )
        boundary = log.derive_messages()
        log.append("step/start", {"turn": turn, "step": 1}, time=0)
        if turn == 1:
            header = {"header": {"config": {"model": "m"}}, "reason": "initial"}
            log.append("request/header", header, time=0)
        folded = log.request_header()
        assert folded is not None
        bodies.append(build_chat_body(folded, request_messages(folded, boundary)))
        thought = {"content": [{"type": "reasoning", "text": "hm"}]}  # no text
        log.append("assistant/message", thought, time=0, surface_op="append")
        log.append("step/end", {"turn": turn, "step": 1}, time=0)
        log.append("turn/end", {"turn": turn, "reason": {}}, time=0)
    assert bodies[1]["messages"][1] == {"role": "assistant", "content": None}
    bodies[1]["messages"][1]["content"] = ""
    lines = [dump_line(make_storage_line("s", 0)).encode()]
    lines += [dump_line(e).encode() for e in log]
    report = check_lines(
        lines, captures=read_captures([json.dumps(b).encode() for b in bodies])
    )
    [found] = report.findings
    assert "messages[1].content" in found.message
    assert (found.expected, found.found) == ("null", '""')
    dumped = found.dump()
    assert dumped["expected"] is None
    assert dumped["found"] == '""'
    assert "      expected: null" in render_text(report)


@pytest.mark.spec("REQ-2", "CACHE-2")
def test_a_first_response_counts_and_finds_what_dispatching_in_full_does() -> None:
    """`first_response`'s shortcut for the common case (a header in force, no
    warning held, not seeded, no capture) against `_dispatch` in full, in
    every combination of what the shortcut looks at but the capture: with
    captures (the tests above) it takes `_dispatch`."""
    cases = itertools.product([HEADER, None], *[[False, True]] * 3, range(3), range(3))
    for header, unknown, history_unknown, warned, seed_length, step_seq in cases:
        outcomes = []
        for shortcut in (True, False):
            rules = LogChecker().requests
            fold = rules.opening.fold
            fold.state, fold.unknown = header, unknown
            rules.seed_length = seed_length
            step = OpenStep(turn=1, step=1, line=3, seq=step_seq)
            step.history_unknown = history_unknown
            if warned:
                step.cache_warning = finding("CACHE-2", 3, 1, "held", level=SHOULD)
            if shortcut:
                found = rules.first_response(step, 5, 4)
            else:
                step.responded = True
                found = rules._dispatch(step, 5, certain=True, seq=4)
            outcomes.append((list(found), step, rules.dispatched, rules.unrebuilt))
        assert outcomes[0] == outcomes[1], (header, unknown, history_unknown, warned)


SUMMARY = (
    json.dumps(
        {
            "index": 99,
            "path": "/chat/completions",
            "body": {
                "model": "deepseek-chat",
                "messages": [
                    {"role": "system", "content": "Summarise the conversation."},
                    {"role": "user", "content": "What files are there? a.py, b.py"},
                ],
            },
        }
    ).encode()
    + b"\n"
)
"""A compaction summary the original harness sends with the session's own key."""


@pytest.mark.spec("CHECK-1")
def test_a_one_shot_request_between_steps_is_a_warning_not_a_wire_failure() -> None:
    lines = capture_lines("session-prefix.capture.jsonl")
    report = check_with([*lines[:2], SUMMARY, *lines[2:]])
    [found] = report.findings
    assert (found.rule, found.level) == ("CHECK-1", SHOULD)
    assert "request 99" in found.message
    assert "no step of the log" in found.message
    assert report.summary.requests_matched == 4


@pytest.mark.spec("CHECK-1", "REQ-1")
def test_a_step_whose_request_differs_still_fails_beside_a_one_shot_request() -> None:
    lines = capture_lines("session-prefix.tampered-message.capture.jsonl")
    report = check_with([*lines[:3], SUMMARY, *lines[3:]])
    assert [(found.rule, found.level, found.line) for found in report.findings] == [
        ("REQ-1", "MUST", 32),
        ("CHECK-1", SHOULD, 49),
    ]

"""Requests rebuilt from hand-written logs: which step sent what, and on what evidence.

The loop's tests rebuild real sessions (tests/reference/loop/); these pin
the edges a real session rarely shows: how a step's evidence is read, which
header event is a step's own, and how captures are matched to steps.
"""

from __future__ import annotations

import pytest
from messages import text

from reqfold.reference.reconstruct import (
    compare_with_captures,
    fold_through,
    is_provider_error_code,
    rebuild_requests,
)
from reqfold.reference.revisions import Revision
from reqfold.reference.session_log import SessionLog

HEADER = {"header": {"config": {"model": "m"}}, "reason": "initial"}
OTHER_MODEL = {"config": {"model": "n"}}
ANSWER = {"content": [text("ok")]}


def build(*events: tuple[str, dict]) -> list[dict]:
    """A log of `events` (type, data), with surface ops where the type needs one."""
    log = SessionLog()
    for kind, data in events:
        op = "append" if kind in ("user/message", "assistant/message") else None
        log.append(kind, data, time=0, surface_op=op)
    return log.events


def step(number: int) -> tuple[str, dict]:
    return ("step/start", {"turn": 1, "step": number})


def turn_end(reason: object) -> tuple[str, dict]:
    return ("turn/end", {"turn": 1, "reason": reason})


def evidence(events: list[dict]) -> list[tuple[int, str]]:
    return [(r.step, r.evidence) for r in rebuild_requests(events)]


@pytest.mark.parametrize(
    ("code", "provider"),
    [
        ("SERVER", True),
        ("RATE_LIMIT", True),
        ("HTTP_503", True),
        ("MODEL_STOPPED_LENGTH", True),
        ("TOOL_FAILED", False),
        ("http_503", False),
        ("", False),
        (5, False),
        (None, False),
    ],
)
def test_a_provider_error_code_is_a_listed_one_or_an_http_or_model_stop_code(
    code: object, provider: bool
) -> None:
    assert is_provider_error_code(code) is provider


OPENING = (("turn/start", {"turn": 1}), ("user/message", {"content": [text("hi")]}))

EVIDENCE = {
    "answered": (
        [step(1), ("request/header", HEADER), ("assistant/message", ANSWER)],
        "response",
    ),
    "provider-error": (
        [
            step(1),
            ("request/header", HEADER),
            turn_end({"kind": "error", "code": "SERVER"}),
        ],
        "provider-error",
    ),
    "other-error": (
        [
            step(1),
            ("request/header", HEADER),
            turn_end({"kind": "error", "code": "TOOL_FAILED"}),
        ],
        "header",
    ),
    "cancelled-with-a-code": (
        [
            step(1),
            ("request/header", HEADER),
            turn_end({"kind": "cancelled", "code": "SERVER"}),
        ],
        "header",
    ),
    "reason-not-an-object": (
        [step(1), ("request/header", HEADER), turn_end("error")],
        "header",
    ),
    "error-under-the-header-in-force": (
        [
            ("request/header", HEADER),
            step(1),
            turn_end({"kind": "error", "code": "SERVER"}),
        ],
        "provider-error",
    ),
    "answered-then-error": (
        [
            step(1),
            ("request/header", HEADER),
            ("assistant/message", ANSWER),
            turn_end({"kind": "error", "code": "SERVER"}),
        ],
        "response",
    ),
}


@pytest.mark.spec("CHECK-1")
@pytest.mark.parametrize(("events", "expected"), EVIDENCE.values(), ids=EVIDENCE.keys())
def test_a_step_shows_it_was_sent_by_a_response_or_a_provider_error_only(
    events: list[tuple[str, dict]], expected: str
) -> None:
    rebuilt = rebuild_requests(build(*OPENING, *events))
    assert [(r.turn, r.step, r.evidence) for r in rebuilt] == [(1, 1, expected)]
    assert rebuilt[0].sent is (expected in ("response", "provider-error"))


@pytest.mark.spec("REQ-2")
def test_a_step_without_its_own_header_event_sends_the_header_in_force() -> None:
    events = build(
        *OPENING,
        ("request/header", HEADER),
        step(1),
        ("step/end", {}),
        step(2),
        ("request/header-delta", OTHER_MODEL),
        ("assistant/message", ANSWER),
        ("request/header-delta", {"config": {"model": "late"}}),
    )
    rebuilt = rebuild_requests(events)
    assert [(r.step, r.header_seq, r.evidence) for r in rebuilt] == [
        (1, None, "none"),
        (2, 6, "response"),
    ]
    assert [r.header["config"]["model"] for r in rebuilt] == ["m", "n"]
    assert [r.boundary for r in rebuilt] == [3, 5]


@pytest.mark.spec("REQ-2", "TURN-3")
@pytest.mark.parametrize("closer", ["step/start", "step/end", "turn/end"])
def test_a_header_event_after_the_step_closes_is_not_the_steps_own(
    closer: str,
) -> None:
    close = {
        "step/start": step(2),
        "step/end": ("step/end", {}),
        "turn/end": turn_end({"kind": "completed"}),
    }[closer]
    events = build(
        *OPENING,
        ("request/header", HEADER),
        step(1),
        close,
        ("request/header-delta", OTHER_MODEL),
    )
    first = rebuild_requests(events)[0]
    assert (first.step, first.header_seq, first.header) == (1, None, HEADER["header"])


def test_a_step_with_no_header_in_force_sent_nothing_and_later_steps_still_count() -> (
    None
):
    events = build(
        *OPENING,
        step(1),
        ("step/end", {}),
        step(2),
        ("request/header", HEADER),
        ("assistant/message", ANSWER),
    )
    assert evidence(events) == [(2, "response")]


def test_fold_through_is_the_header_in_force_after_the_given_event() -> None:
    events = build(
        ("request/header", HEADER),
        ("request/header-delta", OTHER_MODEL),
        ("note", {}),
    )
    assert fold_through(events, 0) == HEADER["header"]
    assert fold_through(events, 1) == OTHER_MODEL
    assert fold_through(events, 2) == OTHER_MODEL


@pytest.mark.spec("CHECK-1", "WIRE-5")
def test_captures_match_the_sent_steps_and_a_maybe_sent_step_only_when_equal() -> None:
    events = build(
        *OPENING,
        step(1),
        ("request/header", HEADER),
        ("step/end", {}),
        step(2),
        ("request/header-delta", OTHER_MODEL),
        ("assistant/message", ANSWER),
    )
    maybe, sent = rebuild_requests(events)
    assert (maybe.evidence, sent.evidence) == ("header", "response")
    assert compare_with_captures(events, [maybe.body(), sent.body()]) == []
    assert compare_with_captures(events, [sent.body()]) == []
    # A deployment member is not the contract's (WIRE-5).
    assert compare_with_captures(events, [{**sent.body(), "user": "u"}]) == []
    missing = compare_with_captures(events, [])
    assert len(missing) == 1
    assert "boundary seq 5" in missing[0]
    assert "nothing was captured" in missing[0]
    wrong = compare_with_captures(events, [{**sent.body(), "messages": []}])
    assert len(wrong) == 1
    assert wrong[0].startswith("request 0 (turn 1, step 2, boundary seq 5)")
    extra = compare_with_captures(events, [sent.body(), sent.body()])
    assert extra == ["1 captured request(s) match no step of the log"]


@pytest.mark.spec("REQ-2")
def test_a_delta_logged_before_the_step_is_applied_once() -> None:
    # Applied twice, a delta that adds a tool would conflict (TOOLS-5).
    added = {"tools": {"added": [{"name": "t"}], "removed": [], "changed": []}}
    events = build(
        *OPENING,
        ("request/header", HEADER),
        ("request/header-delta", added),
        step(1),
        ("request/header-delta", OTHER_MODEL),
        ("assistant/message", ANSWER),
    )
    (rebuilt,) = rebuild_requests(events)
    assert rebuilt.header == {"config": {"model": "n"}, "tools": [{"name": "t"}]}


@pytest.mark.spec("WIRE-5")
def test_a_rebuilt_body_is_unstreamed_unless_asked_and_carries_given_settings() -> None:
    events = build(
        *OPENING, step(1), ("request/header", HEADER), ("assistant/message", ANSWER)
    )
    (rebuilt,) = rebuild_requests(events)
    assert rebuilt.body()["stream"] is False
    assert "stream_options" not in rebuilt.body()
    assert rebuilt.body(stream=True)["stream"] is True
    assert (
        rebuilt.body(settings={"reasoning_effort": "low"})["reasoning_effort"] == "low"
    )
    assert "reasoning_effort" not in rebuilt.contract_body()


def test_fold_through_reads_in_the_given_revision_and_is_none_before_any_header() -> (
    None
):
    suffixed = {
        "config": {"model": "m"},
        "messageSuffix": [{"role": "user", "content": []}],
    }
    events = build(
        ("note", {}), ("request/header", {"header": suffixed, "reason": "initial"})
    )
    assert fold_through(events, 0) is None
    assert fold_through(events, 1, Revision.REQUEST_MESSAGES) == suffixed


@pytest.mark.spec("CHECK-1")
def test_every_sent_step_without_a_capture_is_reported_and_a_late_match_counts() -> (
    None
):
    events = build(
        *OPENING,
        step(1),
        ("request/header", HEADER),
        ("assistant/message", ANSWER),
        ("step/end", {}),
        step(2),
        ("request/header-delta", OTHER_MODEL),
        ("step/end", {}),
        step(3),
        ("request/header-delta", {"config": {"model": "o"}}),
        ("assistant/message", ANSWER),
    )
    first, maybe, third = rebuild_requests(events)
    assert [r.evidence for r in (first, maybe, third)] == [
        "response",
        "header",
        "response",
    ]
    bodies = [first.body(), maybe.body(), third.body()]
    assert compare_with_captures(events, bodies) == []
    assert compare_with_captures(events, [bodies[0], bodies[2]]) == []
    missing = compare_with_captures(events, [])
    assert len(missing) == 2
    assert all("nothing was captured" in problem for problem in missing)

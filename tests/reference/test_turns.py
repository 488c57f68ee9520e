"""The turn and step fold (`reqfold.reference.turns`) the loop and the rebuild share."""

from __future__ import annotations

import pytest

from reqfold.reference.turns import Turns, Unanswered, track, unanswered_result


def event(seq, kind, **data):
    return {"seq": seq, "type": kind, "data": data}


def fold(*events):
    turns = Turns()
    for one in events:
        turns = track(turns, one)
    return turns


def call_block(call_id):
    return {"type": "tool-call", "id": call_id, "name": "t", "arguments": "{}"}


OPENING = (
    event(0, "turn/start", turn=1),
    event(1, "user/message", content=[]),
    event(2, "step/start", turn=1, step=1),
    event(3, "assistant/message", turn=1, step=1, content=[call_block("a")]),
)


@pytest.mark.spec("TURN-1", "TURN-2")
def test_a_turn_left_open_mid_step_shows_its_open_turn_step_and_unanswered_call():
    turns = fold(*OPENING)
    assert (turns.last_turn, turns.open_turn) == (1, 1)
    assert turns.open_step is not None
    assert (turns.open_step.turn, turns.open_step.step) == (1, 1)
    assert turns.open_step.boundary == 2
    assert turns.unanswered == (Unanswered(turn=1, step=1, call_id="a", source=3),)


@pytest.mark.spec("WIRE-2")
def test_a_started_call_is_sourced_at_its_tool_call_and_its_result_answers_it():
    started = fold(*OPENING, event(4, "tool/call", callId="a"))
    assert [(c.started, c.source) for c in started.unanswered] == [(True, 4)]
    answered = track(started, event(5, "tool/result", callId="a"))
    assert answered.unanswered == ()


@pytest.mark.spec("TURN-2")
def test_a_closed_step_stays_the_turn_s_latest_until_the_turn_ends():
    closed = fold(*OPENING, event(4, "step/end", turn=1, step=1))
    assert closed.open_step is None
    assert closed.unanswered == ()
    assert closed.latest_step is not None
    assert closed.latest_step.boundary == 2
    ended = track(closed, event(5, "turn/end", turn=1, reason={"kind": "completed"}))
    assert (ended.open_turn, ended.latest_step, ended.last_turn) == (None, None, 1)


@pytest.mark.spec("JSON-5")
def test_an_integral_float_turn_counts_as_that_integer_and_a_boolean_counts_as_none():
    assert fold(event(0, "turn/start", turn=2.0)).last_turn == 2
    assert fold(event(0, "turn/start", turn=2.0)).open_turn == 2
    assert fold(event(0, "turn/start", turn=True)).last_turn == 0


@pytest.mark.spec("TURN-2", "WIRE-2")
@pytest.mark.parametrize(
    ("started", "kind", "text"),
    [
        (False, "aborted", "not run: the turn was aborted before this call started"),
        (True, "disposed", "interrupted: the turn was disposed while the tool ran"),
        (False, "error", "not run: the turn was ended by an error before this call"),
    ],
)
def test_an_unanswered_call_is_answered_with_an_error_naming_the_turn_s_end(
    started, kind, text
):
    call = Unanswered(turn=1, step=2, call_id="c", source=7, started=started)
    data = unanswered_result(call, {"kind": kind})
    assert (data["turn"], data["step"], data["callId"], data["isError"]) == (
        1,
        2,
        "c",
        True,
    )
    assert data["content"][0]["text"].startswith(text)

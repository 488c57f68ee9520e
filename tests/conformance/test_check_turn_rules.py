"""The turn rules' shortcut for a conforming log agrees with their rules in full.

Each handler of `TurnRules` first tries the case of a conforming log (the
next number, in the open turn or step) and otherwise takes its
rule-by-rule path (``_turn_start`` ...). The model is a `TurnRules` whose
handlers always take that path: on any sequence of turn and step events,
both must find the same, close the same steps and leave the same state.
"""

from __future__ import annotations

from typing import Any

import pytest
from example_counts import scaled_examples
from hypothesis import given, settings, strategies as st

from reqfold.conformance.check.findings import Finding
from reqfold.conformance.check.lines import Envelope
from reqfold.conformance.check.turn_rules import OpenStep, Position, TurnRules

KINDS = ("turn/start", "turn/end", "step/start", "step/end")


class InFull(TurnRules):
    """`TurnRules` without the shortcut: every event takes the rules in full."""

    def turn_start(self, event: Envelope, data: Any, number: int, seq: int) -> Any:
        return self._turn_start(data, number, seq)

    def turn_end(self, event: Envelope, data: Any, number: int, seq: int) -> Any:
        return self._turn_end(data, number, seq)

    def step_start(self, event: Envelope, data: Any, number: int, seq: int) -> Any:
        return self._step_start(data, number, seq)

    def step_end(self, event: Envelope, data: Any, number: int, seq: int) -> Any:
        return self._step_end(self.position.step, data, number, seq)


def watched(kind: type[TurnRules]) -> tuple[TurnRules, list[tuple[Any, ...]]]:
    """Rules of `kind` that record each step they close, and where."""
    closed: list[tuple[Any, ...]] = []

    def closing(step: OpenStep, number: int) -> list[Finding]:
        closed.append((step.turn, step.step, step.line, step.seq, step.ordinal, number))
        return []

    return kind(Position(), closing=closing), closed


def state(rules: TurnRules) -> tuple[Any, ...]:
    return (
        rules.state,
        rules.position.turn,
        rules.last_turn,
        rules.last_step,
        rules.steps_started,
        rules.position.step,
    )


NEAR = 11
"""How many values `number` chooses among for a member (some repeated)."""


def number(expected: int, pick: int) -> Any:
    """A member's value, the `pick`-th of eleven: three times the expected
    number, else a near or wrong one."""
    near = [float(expected), expected + 1, expected - 1, 0, True, None, "1"]
    return [expected, expected, expected, *near, [expected]][pick]


def conforming(rules: TurnRules) -> tuple[str, dict[str, Any]]:
    """The event a conforming log writes next (a turn of one step)."""
    turn = rules.state.open_turn
    if turn is None:
        return "turn/start", {"turn": rules.last_turn + 1, "trigger": {}}
    step = rules.position.step
    if step is not None:
        return "step/end", {"turn": turn, "step": step.step}
    if rules.last_step == 0:
        return "step/start", {"turn": turn, "step": 1}
    return "turn/end", {"turn": turn, "reason": {"kind": "completed"}}


TENTHS = st.integers(0, 9)
SIXTHS = st.integers(0, 5)
KIND = st.sampled_from(KINDS)
PICK = st.sampled_from(range(NEAR))
# Built once: the events depend on the rules' state, and building a
# strategy for each draw (a composite, a sampled list of numbers) cost
# hypothesis more than the draws themselves.


def event_data(draw: st.DrawFn, rules: TurnRules) -> tuple[str, Any]:
    """The next event: often what a conforming log writes, else any turn or
    step event whose members may be absent, wrong, or not numbers."""
    if draw(TENTHS) < 6:
        return conforming(rules)
    kind = draw(KIND)
    if draw(TENTHS) == 0:  # data that is not an object (LOG-3)
        return kind, None
    turn = rules.state.open_turn
    data: dict[str, Any] = {}
    if draw(SIXTHS):
        expected = rules.last_turn + 1 if turn is None else turn
        data["turn"] = number(expected, draw(PICK))
    if kind.startswith("step/") and draw(SIXTHS):
        data["step"] = number(rules.last_step + (kind == "step/start"), draw(PICK))
    if kind == "turn/end" and draw(SIXTHS):
        data["reason"] = {"kind": "completed"}
    return kind, data


EVENTS = st.integers(1, 30)
HANDLERS = {
    "turn/start": TurnRules.turn_start,
    "turn/end": TurnRules.turn_end,
    "step/start": TurnRules.step_start,
    "step/end": TurnRules.step_end,
}


@st.composite
def turn_events(draw: st.DrawFn) -> list[tuple[str, Any]]:
    """Turn and step events, each drawn (`event_data`) from the state the
    shortcut is in after the ones before: a `TurnRules` handles them as
    they are drawn. One composite rather than a ``st.data()`` draw per
    event, whose bookkeeping cost more than the rules under test."""
    rules = TurnRules(Position())
    events: list[tuple[str, Any]] = []
    for seq in range(draw(EVENTS)):
        kind, body = event_data(draw, rules)
        event = Envelope(type=kind, seq=seq, time=0, data=body)
        HANDLERS[kind](rules, event, body, seq + 2, seq)
        events.append((kind, body))
    return events


@pytest.mark.spec("TURN-1", "TURN-2")
@settings(max_examples=scaled_examples(500))
@given(turn_events())
def test_the_turn_shortcuts_find_close_and_leave_what_the_full_rules_do(
    events: list[tuple[str, Any]],
) -> None:
    shortcut, closed_shortcut = watched(TurnRules)
    full, closed_full = watched(InFull)
    for seq, (kind, body) in enumerate(events):
        event = Envelope(type=kind, seq=seq, time=0, data=body)
        number = seq + 2
        handle = HANDLERS[kind]
        got = handle(shortcut, event, body, number, seq)
        want = getattr(full, handle.__name__)(event, body, number, seq)
        assert list(got) == list(want), (kind, body)
        assert state(shortcut) == state(full), (kind, body)
        assert closed_shortcut == closed_full
        for rules in (shortcut, full):  # the open turn, kept at hand, is the fold's
            assert rules.position.turn == rules.state.open_turn, (kind, body)

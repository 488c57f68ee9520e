"""Where a session log stands in its turns and steps, folded event by event.

The turn and step state of a log (TURN-1 .. TURN-3): the last turn
started, the open turn, the open step and the turn's latest step (open or
closed), and the tool calls of the open step that no ``tool/result``
answers yet (WIRE-2). The agent loop follows it to close a turn a crash
left open and to answer the calls a cancel stranded
(`reference.loop.agent`); `reference.reconstruct` follows it to find each
step's boundary. A checker can fold it too, instead of working the state
out again.

`track(turns, event)` is a fold like `reqfold.reference.header.fold_step`: an immutable
`Turns` and one event in, the next `Turns` out. It judges nothing: an
event that breaks a TURN rule moves the state as plainly as it can (a
``turn/start`` inside an open turn opens the new one), and numbers are kept
as the log spells them except where noted.

Pure: JSON values in, immutable values out; no clock, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, NamedTuple

from reqfold.reference.json_values import JsonObject, is_integer

ENDED = {"aborted": "aborted", "disposed": "disposed", "interrupted": "interrupted"}
"""How an unanswered tool call's error result names the turn's end, by the
``turn/end`` reason's kind; any other kind reads "ended by an error"."""


def as_int(value: Any) -> Any:
    """An integral number as an `int` (JSON-5: ``1.0`` is 1); else unchanged."""
    return int(value) if is_integer(value) else value


class Step(NamedTuple):
    """A step as its ``step/start`` names it (numbers as logged)."""

    turn: Any
    step: Any
    boundary: int
    """Seq of the ``step/start``."""


@dataclass(frozen=True, slots=True)
class Unanswered:
    """A tool call of the open step that has no ``tool/result`` yet."""

    turn: Any
    """The assistant message's turn, an `int` when integral (JSON-5)."""
    step: Any
    call_id: Any
    source: int
    """Seq of the event holding the call: the assistant message, then its
    ``tool/call`` once the call started."""
    started: bool = False


class Turns(NamedTuple):
    """The turn and step state after some prefix of a log.

    A named tuple, like `Step`: the checker folds it on every turn and step
    event of a log, and a tuple is built faster than a frozen dataclass
    (docs/benchmarks.md, "Numbers behind the code").
    """

    last_turn: int = 0
    """The highest integral turn number started (0 when none)."""
    open_turn: Any = None
    """The open turn's number (an `int` when integral), or None."""
    open_step: Step | None = None
    """The step opened and not yet closed, or None."""
    latest_step: Step | None = None
    """The open turn's latest step, open or closed; None after ``turn/end``."""
    unanswered: tuple[Unanswered, ...] = ()
    """The open step's tool calls without a result, in log order."""


_new = tuple.__new__
"""Builds a `Turns` or `Step` from a tuple of all its fields, without the
named tuple's ``__new__`` (a Python call, twice the cost): the four
transitions below run on every turn and step event a checker reads."""


def start_turn(turns: Turns, number: Any) -> Turns:
    """A ``turn/start`` naming turn `number` (as logged) was logged."""
    last, _, open_step, latest_step, unanswered = turns
    if type(number) is not int:  # JSON-5: 1.0 is turn 1; a boolean is no number
        if not is_integer(number):
            return _new(Turns, (last, number, open_step, latest_step, unanswered))
        number = int(number)
    return _new(
        Turns,
        (number if number > last else last, number, open_step, latest_step, unanswered),
    )


def end_turn(turns: Turns) -> Turns:
    """A ``turn/end`` was logged: no turn or step is open."""
    return _new(Turns, (turns.last_turn, None, None, None, ()))


def start_step(turns: Turns, turn: Any, step: Any, boundary: int) -> Turns:
    """A ``step/start`` naming `turn` and `step` (as logged) at seq `boundary`."""
    opened = _new(Step, (turn, step, boundary))
    return _new(
        Turns, (turns.last_turn, turns.open_turn, opened, opened, turns.unanswered)
    )


def end_step(turns: Turns) -> Turns:
    """A ``step/end`` was logged: no step is open, no call waits for a result."""
    return _new(Turns, (turns.last_turn, turns.open_turn, None, turns.latest_step, ()))


def track(turns: Turns, event: JsonObject) -> Turns:
    """The state once `event` is logged after `turns`.

    The turn and step transitions are `start_turn`, `end_turn`,
    `start_step` and `end_step`, which a reader that has the numbers at
    hand (the checker) calls itself.
    """
    kind, data = event["type"], event["data"]
    if kind == "turn/start":
        return start_turn(turns, data.get("turn"))
    if kind == "turn/end":
        return end_turn(turns)
    if kind == "step/start":
        return start_step(turns, data.get("turn"), data.get("step"), event["seq"])
    if kind == "step/end":
        return end_step(turns)
    if kind == "assistant/message" and isinstance(data.get("content"), list):
        calls = tuple(
            Unanswered(
                turn=as_int(data.get("turn")),
                step=as_int(data.get("step")),
                call_id=block.get("id"),
                source=event["seq"],
            )
            for block in data["content"]
            if isinstance(block, dict) and block.get("type") == "tool-call"
        )
        return turns._replace(unanswered=turns.unanswered + calls) if calls else turns
    if kind == "tool/call":
        index = _find(turns, data.get("callId"), started=False)
        if index is None:
            return turns
        started = replace(turns.unanswered[index], started=True, source=event["seq"])
        return _with(turns, index, started)
    if kind == "tool/result":
        index = _find(turns, data.get("callId"), started=True)
        if index is None:
            index = _find(turns, data.get("callId"), started=False)
        return turns if index is None else _with(turns, index, None)
    return turns


def unanswered_result(call: Unanswered, reason: JsonObject) -> JsonObject:
    """The data of the error ``tool/result`` answering `call` at a turn's end.

    A call that never started is answered ``not run``; one the end
    interrupted (its ``tool/call`` logged), ``interrupted``.
    """
    ended = ENDED.get(reason["kind"], "ended by an error")
    text = (
        f"interrupted: the turn was {ended} while the tool ran"
        if call.started
        else f"not run: the turn was {ended} before this call started"
    )
    return {
        "turn": call.turn,
        "step": call.step,
        "callId": call.call_id,
        "content": [{"type": "text", "text": text}],
        "isError": True,
    }


def _find(turns: Turns, call_id: Any, *, started: bool) -> int | None:
    for index, call in enumerate(turns.unanswered):
        if call.call_id == call_id and call.started is started:
            return index
    return None


def _with(turns: Turns, index: int, call: Unanswered | None) -> Turns:
    """`turns` with the unanswered call at `index` replaced, or removed."""
    calls = list(turns.unanswered)
    if call is None:
        del calls[index]
    else:
        calls[index] = call
    return turns._replace(unanswered=tuple(calls))

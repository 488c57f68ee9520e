"""Turns and steps: which are open, and the rules on how they nest.

Implements docs/spec.md TURN-1 (turns numbered from 1, not nested, ended
with a reason; a log ending inside a turn is a warning), TURN-2 (steps
numbered from 1 within their turn, not nested, ended inside it) and TURN-4
(every event but the turn markers inside an open turn).

Theory of operation. Which turn and step are open is the reference's fold
(`reqfold.reference.turns`: `start_turn`, `end_turn`, `start_step`, `end_step`,
the transitions `track` makes on the turn and step events, which are the
only events that move it), fed with the numbers as this checker judged them
(a number the log gets wrong is taken as the one expected, so one wrong
number gives one finding). On top, `TurnRules` judges nesting and
numbering, keeps the numbers it expects next, and writes the `Position`
(the open turn and `OpenStep`) the other rule machines read and annotate;
nothing per event. A step that closes, by its ``step/end`` or because
something it cannot outlive came first, is handed to `closing` (the
request rules decide there what it sent), whose findings join the line's.
Both are given to `TurnRules` when it is built: the `Position` is made
first and shared, so no machine is wired to another after construction.

Each handler first tries the case of a conforming log (the next number, in
the open turn or step, as an `int`), where no rule finds anything, and
returns an empty tuple (Python's one, not a new list); any other event
takes the rule-by-rule path.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from reqfold.conformance.check.findings import MISSING, SHOULD, Finding, finding
from reqfold.conformance.check.lines import Envelope
from reqfold.reference.json_values import JsonObject, is_integer
from reqfold.reference.turns import Turns, end_step, end_turn, start_step, start_turn

TURN_MARKERS = ("turn/start", "turn/end")


@dataclass(slots=True)
class OpenStep:
    """A step while it is open, with what the rule machines noted of it.

    Each field has one owner, the only machine that writes it (the others
    may read it): `TurnRules` the first five (made with the step),
    `OpeningRules` ``header_events`` and ``cache_warning``, `RequestRules`
    ``responded``, ``resolved``, ``boundary`` and ``history_unknown``.
    """

    turn: int
    step: int
    line: int
    seq: int
    ordinal: int = 0
    """How many steps the log started before this one (CACHE-2's "consecutive")."""
    header_events: int = 0
    responded: bool = False
    resolved: bool = False
    """Whether the request it sent (or did not send) was worked out."""
    boundary: list[JsonObject] | None = None
    """The derived history at its start (only when rebuilding requests)."""
    history_unknown: bool = False
    cache_warning: Finding | None = None
    """A CACHE-2 warning held until the step's captured request is known."""


@dataclass(slots=True)
class Position:
    """Where the log is: the open turn's number and the open step, as judged.

    Written by `TurnRules` alone; `OpeningRules`, `RequestRules` and the
    driver read it. It is made before the machines and given to each when
    built, which breaks the cycle of turns closing steps the request rules
    resolve while the request rules read the turns' open step.
    """

    turn: int | None = None
    """The open turn's number, or None: ``TurnRules.state.open_turn``, kept
    at hand, since every line the checker reads asks for it."""
    step: OpenStep | None = None
    """What the rule machines note of the open step (``state.open_step``)."""


def _no_findings(step: OpenStep, line: int) -> Sequence[Finding]:
    return ()


class TurnRules:
    """TURN-1, TURN-2 and TURN-4, and the open turn and step.

    Owns `position` (both fields), `state`, the numbers it expects next
    and, of each `OpenStep`, the fields it is made with.

    Args:
        position: where the log is, shared with the machines that read it.
        closing: called with each step as it closes (the request rules
            resolve what it sent there); its findings are the line's.
    """

    def __init__(
        self,
        position: Position,
        *,
        closing: Callable[[OpenStep, int], Sequence[Finding]] = _no_findings,
    ) -> None:
        self.position = position
        self._closing = closing
        self.state = Turns()
        """The open turn and step, as `reqfold.reference.turns` folds them;
        `position` mirrors it, set with it wherever a turn or step starts or
        ends (a named tuple's field costs several plain attributes' reads)."""
        self.last_turn = 0
        """The number of the last turn started, as judged (the next is one more)."""
        self.last_step = 0
        """The number of the turn's latest step, as judged."""
        self.steps_started = 0

    @property
    def closing(self) -> Callable[[OpenStep, int], Sequence[Finding]]:
        """What each closing step is handed to: given at construction only
        (read-only), so no machine is wired to another after it is built."""
        return self._closing

    def outside(
        self, event: Envelope, data: Any, number: int, seq: int
    ) -> Sequence[Finding]:
        """TURN-4: any event but a turn marker is written inside an open turn."""
        kind = event.type
        if self.position.turn is None and kind not in TURN_MARKERS and kind:
            message = f"{kind} is written outside any open turn"
            return [finding("TURN-4", number, seq, message)]
        return ()

    def _close_step(self, number: int, out: list[Finding]) -> None:
        step, self.position.step = self.position.step, None
        if step is not None:
            self.state = end_step(self.state)
            out.extend(self._closing(step, number))

    def turn_start(
        self, event: Envelope, data: Any, number: int, seq: int
    ) -> Sequence[Finding]:
        position = self.position
        if position.step is None and position.turn is None and type(data) is dict:
            turn = data.get("turn")
            if type(turn) is int and turn == self.last_turn + 1:  # the next turn
                self.state = start_turn(self.state, turn)
                position.turn = self.last_turn = turn
                self.last_step = 0
                return ()
        return self._turn_start(data, number, seq)

    def _turn_start(self, data: Any, number: int, seq: int) -> list[Finding]:
        out: list[Finding] = []
        self._close_step(number, out)
        open_turn = self.position.turn
        turn = (
            data.get("turn", MISSING) if isinstance(data, dict) else self.last_turn + 1
        )
        if open_turn is not None:
            out.append(
                finding(
                    "TURN-1",
                    number,
                    seq,
                    f"a turn starts while turn {open_turn} is open; turns do not nest",
                )
            )
        if turn != self.last_turn + 1 or not is_integer(turn):
            out.append(
                finding(
                    "TURN-1",
                    number,
                    seq,
                    "turns are numbered from 1, increasing by 1",
                    expected=self.last_turn + 1,
                    found=turn,
                )
            )
        judged = int(turn) if is_integer(turn) else self.last_turn + 1
        self.state = start_turn(self.state, judged)
        self.position.turn = self.last_turn = judged
        self.last_step = 0
        return out

    def turn_end(
        self, event: Envelope, data: Any, number: int, seq: int
    ) -> Sequence[Finding]:
        position = self.position
        open_turn = position.turn
        if (
            position.step is None
            and open_turn is not None
            and type(data) is dict
            and data.get("turn") == open_turn
            and "reason" in data
        ):  # the open turn ends, no step open
            self.state = end_turn(self.state)
            position.turn = None
            return ()
        return self._turn_end(data, number, seq)

    def _turn_end(self, data: Any, number: int, seq: int) -> list[Finding]:
        out: list[Finding] = []
        open_turn = self.position.turn
        open_step = self.position.step
        if open_step is not None:
            out.append(
                finding(
                    "TURN-2",
                    number,
                    seq,
                    f"turn {open_turn} ends while its step {open_step.step} is open",
                )
            )
            self._close_step(number, out)
        turn = data.get("turn", MISSING) if isinstance(data, dict) else open_turn
        if open_turn is None:
            out.append(finding("TURN-1", number, seq, "turn/end without an open turn"))
        elif turn != open_turn:
            out.append(
                finding(
                    "TURN-1",
                    number,
                    seq,
                    "turn/end names another turn than the open one",
                    expected=open_turn,
                    found=turn,
                )
            )
        if isinstance(data, dict) and "reason" not in data:
            out.append(finding("TURN-1", number, seq, "turn/end data needs a reason"))
        self.state = end_turn(self.state)
        self.position.turn = None
        return out

    def step_start(
        self, event: Envelope, data: Any, number: int, seq: int
    ) -> Sequence[Finding]:
        position = self.position
        open_turn = position.turn
        if position.step is None and open_turn is not None and type(data) is dict:
            step = data.get("step")
            if (
                type(step) is int
                and step == self.last_step + 1
                and data.get("turn") == open_turn
            ):  # the open turn's next step
                self.last_step = step
                self.state = start_step(self.state, open_turn, step, seq)
                position.step = OpenStep(
                    open_turn, step, number, seq, self.steps_started
                )
                self.steps_started += 1
                return ()
        return self._step_start(data, number, seq)

    def _step_start(self, data: Any, number: int, seq: int) -> list[Finding]:
        out: list[Finding] = []
        open_turn = self.position.turn
        if self.position.step is not None:
            out.append(
                finding(
                    "TURN-2",
                    number,
                    seq,
                    f"a step starts while step {self.position.step.step} is open;"
                    " steps do not nest",
                )
            )
            self._close_step(number, out)
        # data that is not an object was reported (LOG-1/LOG-3): assume it fits
        fits = not isinstance(data, dict)
        turn = open_turn if fits else data.get("turn", MISSING)
        step = self.last_step + 1 if fits else data.get("step", MISSING)
        if open_turn is None:
            out.append(finding("TURN-2", number, seq, "a step starts outside any turn"))
        elif turn != open_turn:
            out.append(
                finding(
                    "TURN-2",
                    number,
                    seq,
                    "step/start names another turn than the open one",
                    expected=open_turn,
                    found=turn,
                )
            )
        if step != self.last_step + 1 or not is_integer(step):
            out.append(
                finding(
                    "TURN-2",
                    number,
                    seq,
                    "steps are numbered from 1 within each turn, increasing by 1",
                    expected=self.last_step + 1,
                    found=step,
                )
            )
        self.last_step = int(step) if is_integer(step) else self.last_step + 1
        self.state = start_step(self.state, open_turn, self.last_step, seq)
        self.position.step = OpenStep(
            turn=open_turn or 0,
            step=self.last_step,
            line=number,
            seq=seq,
            ordinal=self.steps_started,
        )
        self.steps_started += 1
        return out

    def step_end(
        self, event: Envelope, data: Any, number: int, seq: int
    ) -> Sequence[Finding]:
        position = self.position
        step = position.step
        if (
            step is not None
            and type(data) is dict
            and data.get("turn") == step.turn
            and data.get("step") == step.step
        ):  # the open step ends
            position.step = None
            self.state = end_step(self.state)
            return self._closing(step, number)
        return self._step_end(step, data, number, seq)

    def _step_end(
        self, step: OpenStep | None, data: Any, number: int, seq: int
    ) -> list[Finding]:
        if step is None:
            return [finding("TURN-2", number, seq, "step/end without an open step")]
        out: list[Finding] = []
        found = (data.get("turn"), data.get("step")) if isinstance(data, dict) else None
        if found != (step.turn, step.step):
            out.append(
                finding(
                    "TURN-2",
                    number,
                    seq,
                    "step/end names another step than the open one",
                    expected={"turn": step.turn, "step": step.step},
                    found=data,
                )
            )
        self._close_step(number, out)
        return out

    def finish(self, number: int) -> list[Finding]:
        """The end of the log: close the open step; an open turn is a warning."""
        out: list[Finding] = []
        self._close_step(number, out)
        open_turn = self.position.turn
        if open_turn is not None:
            out.append(
                finding(
                    "TURN-1",
                    number,
                    None,
                    f"the log ends inside turn {open_turn} (a crash, or a session"
                    " still running)",
                    level=SHOULD,
                )
            )
        return out

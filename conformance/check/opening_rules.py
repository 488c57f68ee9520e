"""Header events in their steps, and the opening that should stay put.

Implements docs/spec.md TURN-3 (a header event inside its step, before the
step's first response event), WRITER-5's "at most one header event per
request", the fold and writer contract through `HeaderFold`, and CACHE-2
(the heuristic for an opening that varies per request).

Theory of operation. `OpeningRules` folds each header event with
`HeaderFold` and keeps the last change it made to the header in force,
while nothing since explains the next one (a compaction, a replace, a new
instance). When two consecutive requests both change the same part of the
opening, it warns; which parts changed is worked out only for such a pair,
so the common case costs nothing. With ``--requests`` the warning waits on
its step until the step's captured request (and what the provider cached
of it) is known.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reqfold.conformance.check.findings import SHOULD, Finding, finding
from reqfold.conformance.check.header_rules import HeaderFold, fold_equal
from reqfold.conformance.check.lines import Envelope
from reqfold.conformance.check.turn_rules import OpenStep, Position
from reqfold.reference.header import DELTA, SNAPSHOT
from reqfold.reference.json_values import JsonObject
from reqfold.reference.revisions import Revision

OPENING = ("system", "tools", "messagePrefix")
"""The header parts that lead a request's prompt (CACHE-2)."""


@dataclass(frozen=True, slots=True)
class HeaderChange:
    """A header event of one step, with the header in force before and after."""

    turn: int
    step: int
    ordinal: int
    kind: str
    data: Any
    before: JsonObject
    after: JsonObject

    def parts(self) -> frozenset[str]:
        """The opening parts this event changed (a delta says so by its arms)."""
        if self.kind == DELTA and isinstance(self.data, dict):
            return frozenset(part for part in OPENING if part in self.data)
        return frozenset(
            part
            for part in OPENING
            if not fold_equal(self.before.get(part), self.after.get(part))
        )

    def site(self, part: str) -> Any:
        """Where in `part` this event changed it: for the system prompt, the
        lines kept at each end and the counts of lines taken out and put in;
        for tools, the names that differ; for the prefix, the positions."""
        before, after = self.before.get(part), self.after.get(part)
        if part == "system":
            old = before.split("\n") if isinstance(before, str) else []
            new = after.split("\n") if isinstance(after, str) else []
            start = 0
            while start < min(len(old), len(new)) and old[start] == new[start]:
                start += 1
            end = 0
            while (
                end < min(len(old), len(new)) - start and old[-1 - end] == new[-1 - end]
            ):
                end += 1
            return (start, end, len(old) - start - end, len(new) - start - end)
        old_items = before if isinstance(before, list) else []
        new_items = after if isinstance(after, list) else []
        if part == "tools":
            old_tools = {_name(tool): tool for tool in old_items}
            new_tools = {_name(tool): tool for tool in new_items}
            return sorted(
                name
                for name in old_tools.keys() | new_tools.keys()
                if not fold_equal(old_tools.get(name), new_tools.get(name))
            )
        return [
            index
            for index in range(max(len(old_items), len(new_items)))
            if index >= min(len(old_items), len(new_items))
            or not fold_equal(old_items[index], new_items[index])
        ]


def _name(tool: Any) -> str:
    name = tool.get("name") if isinstance(tool, dict) else None
    return name if isinstance(name, str) else ""


class OpeningRules:
    """TURN-3, WRITER-5 (one header event per request), the fold, CACHE-2.

    Owns `fold` (the header in force), the turn's header-event count, the
    last unexplained change and, of each `OpenStep`, ``header_events`` and
    ``cache_warning``.

    Args:
        position: the open turn and step (written by `TurnRules`).
        revision: the revision header events are read under.
        hold_warnings: keep a CACHE-2 warning on its step until the step's
            request is known (``--requests``) instead of reporting it at once.
    """

    def __init__(self, position: Position, revision: Revision, *, hold_warnings: bool):
        self.position = position
        self.fold = HeaderFold(revision)
        self.hold_warnings = hold_warnings
        self.turn_header_events = 0
        self.last_change: HeaderChange | None = None
        """The last header event that changed the header in force, while
        nothing since explains a change to the opening (CACHE-2)."""

    def explained(self) -> None:
        """The log shows a cause: the next change to the opening is explained."""
        self.last_change = None

    def lost(self) -> None:
        """What the header became is unknown (a header event the checker could
        not check): judge nothing against it until the next good snapshot."""
        self.fold.state, self.fold.unknown = None, True

    def turn_start(
        self, event: Envelope, data: Any, number: int, seq: int
    ) -> list[Finding]:
        self.turn_header_events = 0
        return []

    def header_event(
        self, event: Envelope, data: Any, number: int, seq: int
    ) -> list[Finding]:
        """A snapshot or delta: where it is, and what it does to the header."""
        kind = event.type
        out: list[Finding] = []
        step = self.position.step
        if step is None:
            out.append(
                finding(
                    "TURN-3",
                    number,
                    seq,
                    "a header event is written outside any open step",
                )
            )
        elif step.responded:
            out.append(
                finding(
                    "TURN-3",
                    number,
                    seq,
                    "a header event comes after its step's first response event",
                )
            )
        if step is not None:
            step.header_events += 1
            if step.header_events > 1:
                out.append(
                    finding(
                        "WRITER-5",
                        number,
                        seq,
                        f"a second header event in turn {step.turn} step"
                        f" {step.step}; each request appends at most one",
                    )
                )
        first_in_turn = self.turn_header_events == 0
        self.turn_header_events += 1
        before = self.fold.state
        if kind == SNAPSHOT:
            out.extend(
                self.fold.snapshot(
                    data, line=number, seq=seq, first_in_turn=first_in_turn
                )
            )
        else:
            out.extend(self.fold.delta(data, line=number, seq=seq))
        after = self.fold.state
        if step is not None and before is not None and after is not None:
            resume = (
                kind == SNAPSHOT
                and isinstance(data, dict)
                and data.get("reason") == "resume"
            )
            # a new instance composes its opening anew: that change is explained
            change = (
                None
                if resume
                else HeaderChange(
                    step.turn, step.step, step.ordinal, kind, data, before, after
                )
            )
            self._volatile_opening(change, step, number, seq, out)
        else:
            self.last_change = None
        return out

    def _volatile_opening(
        self,
        change: HeaderChange | None,
        step: OpenStep,
        number: int,
        seq: int,
        out: list[Finding],
    ) -> None:
        """CACHE-2: one cacheable part changing on consecutive requests.

        The system prompt, tools and prefix lead every request; when one of
        them changes on two consecutive requests (steps of one turn, or the
        last step of a turn and the first of the next) and nothing in the log
        between them explains it (no compaction, no new instance), something
        in it most likely varies per request (a timestamp, an id, map order),
        and every such request misses the provider's cache from that point.
        """
        last, self.last_change = self.last_change, change
        if change is None or last is None or last.ordinal + 1 != step.ordinal:
            return
        again = sorted(last.parts() & change.parts())
        if last.turn != step.turn:
            # Across turns a person may edit the opening between turns; a
            # value that varies per request changes in the same place.
            again = [part for part in again if last.site(part) == change.site(part)]
        if not again:
            return
        if last.turn == step.turn:
            where = f"turn {step.turn}, steps {last.step} and {step.step}"
        else:
            where = (
                f"turn {last.turn} step {last.step}, then turn {step.turn}"
                f" step {step.step}"
            )
        warning = finding(
            "CACHE-2",
            number,
            seq,
            f"{' and '.join(again)} changed on two consecutive requests ({where})"
            " with no compaction or new instance between them: does the opening"
            " hold a value that varies per request?",
            level=SHOULD,
        )
        if self.hold_warnings:  # told when the step's captured request is known
            step.cache_warning = warning
        else:
            out.append(warning)

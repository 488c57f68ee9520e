"""How the checks of a scenario run are made.

`Judge` collects the checks of one run as `Check` results, giving each its
id and its outcome from the rules' level (`rules_level`), with what the check
expected and found recorded as data where it is made. The checks
themselves live in `reqfold.conformance.harness.checks`,
`reqfold.conformance.harness.expectations` and
`reqfold.conformance.harness.stability`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from reqfold.conformance.check import MUST
from reqfold.conformance.harness.evidence import Evidence
from reqfold.conformance.json_text.paths import first_difference
from reqfold.conformance.outcomes import Outcome
from reqfold.conformance.verdict import Check, rules_level
from reqfold.reference.json_values import JsonObject, JsonValue

PART = "scenarios"
"""The part every scenario check belongs to."""

BROKEN_RUN = "run"
"""The check name of a scenario run with no verdict (``SCENARIO@REVISION/run``:
the adapter crashed, hung or broke the protocol before the run's end)."""

COMPARED = "compared"
"""`Facts.difference` when `expected` and `found` have one shape,
so their first difference is found as a JSON path."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Facts:
    """What a report shows of a scenario check (`Check` fields), made where
    the check is made: the one type every check passes them in."""

    step: int | None = None
    """The index among the scenario's steps of the step the check is about."""
    expected: JsonValue = None
    found: JsonValue = None
    difference: str | None = None
    """The first difference, or `COMPARED` to find it as a JSON path."""


NO_FACTS = Facts()
"""A check that judged the whole run and says nothing more."""


def passed(ok: bool) -> Outcome:
    """``pass`` or ``fail``: the outcome of a check that ran (`Judge.add`
    lowers a ``fail`` of SHOULD rules to ``warn``)."""
    return Outcome.PASS if ok else Outcome.FAIL


def scenario_check(
    scenario: str,
    revision: str,
    name: str,
    rules: Sequence[str],
    outcome: Outcome,
    message: str = "",
    *,
    level: str | None = None,
    facts: Facts = NO_FACTS,
    detail: JsonObject | None = None,
) -> Check:
    """One check of the scenario run ``scenario@revision``, named `name`.

    A check that passed keeps its step but no evidence; `Facts.difference`
    `COMPARED` is found from `expected` and `found`.
    """
    expected, found, difference = facts.expected, facts.found, facts.difference
    if outcome is Outcome.PASS:
        expected = found = difference = None
    elif difference == COMPARED:
        difference = (
            None if None in (expected, found) else first_difference(expected, found)
        )
    return Check(
        part=PART,
        id=f"{scenario}@{revision}/{name}",
        scenario=scenario,
        revision=revision,
        name=name,
        rules=tuple(rules),
        level=level or rules_level(rules),
        outcome=outcome,
        message=message,
        step=facts.step,
        expected=expected,
        found=found,
        first_difference=difference,
        detail=dict(detail or {}),
    )


class Judge:
    """Builds the checks of one run, with ids that say what was checked."""

    def __init__(self, evidence: Evidence) -> None:
        self.evidence = evidence
        self.results: list[Check] = []
        self.taken: Counter[str] = Counter()
        """How many checks were added under each name (before any ``#N``)."""
        self.one_shots: frozenset[int] = frozenset()
        """Indexes of captured requests the log checks recognised as no step
        of the log (one-shot requests): ``request`` expectations skip them."""

    def send_step(self, number: int) -> int | None:
        """The index among the scenario's steps of its `number`-th send (from 1)."""
        steps = self.evidence.scenario.steps
        sends = [i for i, step in enumerate(steps) if step.action == "send"]
        return sends[number - 1] if 0 < number <= len(sends) else None

    def step_of_request(self, position: int) -> int | None:
        """The step of the send during which the session's `position`-th
        request left (None when no send holds it)."""
        for number, send in enumerate(self.evidence.sends, start=1):
            if send.captures_before <= position < send.captures_after:
                return self.send_step(number)
        return None

    def add(
        self,
        name: str,
        rules: Sequence[str],
        outcome: Outcome,
        message: str = "",
        *,
        level: str | None = None,
        facts: Facts = NO_FACTS,
        detail: JsonObject | None = None,
    ) -> None:
        """Record a check of `outcome` (`passed`, or ``error``: no verdict).

        A ``fail`` fails at its rules' level (`rules_level`), or at `level`
        when given: a MUST rule the checker reports at SHOULD level (a
        member-order clause) only warns. `facts` and `detail` are what a
        reproduction shows (`scenario_check`).
        """
        level = level or rules_level(rules)
        taken = self.taken[name]
        self.taken[name] += 1
        if taken:  # two expectations of one kind on one request: keep ids unique
            name += f"#{taken + 1}"
        if outcome is Outcome.FAIL and level != MUST:
            outcome = Outcome.WARN
        self.results.append(
            scenario_check(
                self.evidence.scenario.id,
                self.evidence.revision.value,
                name,
                rules,
                outcome,
                message,
                level=level,
                facts=facts,
                detail=detail,
            )
        )

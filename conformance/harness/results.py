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
"""`Judge.add`'s `difference` when `expected` and `found` have one shape,
so their first difference is found as a JSON path."""


def scenario_check(
    scenario: str,
    revision: str,
    name: str,
    rules: Sequence[str],
    outcome: Outcome,
    message: str = "",
    *,
    level: str | None = None,
    step: int | None = None,
    expected: JsonValue = None,
    found: JsonValue = None,
    difference: str | None = None,
    detail: JsonObject | None = None,
) -> Check:
    """One check of the scenario run ``scenario@revision``, named `name`.

    `difference` is the first difference when known, or `COMPARED` to find
    it from `expected` and `found`; a check that passed keeps no evidence.
    """
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
        step=step,
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
        ok: bool | None,
        message: str = "",
        *,
        level: str | None = None,
        step: int | None = None,
        expected: JsonValue = None,
        found: JsonValue = None,
        difference: str | None = None,
        detail: JsonObject | None = None,
    ) -> None:
        """Record a check; `ok` None is an error (no verdict).

        A failed check fails at its rules' level (`rules_level`), or at
        `level` when given: a MUST rule the checker reports at SHOULD level
        (a member-order clause) only warns. `step`, `expected`, `found`,
        `difference` and `detail` are what a reproduction shows
        (`scenario_check`).
        """
        level = level or rules_level(rules)
        taken = self.taken[name]
        self.taken[name] += 1
        if taken:  # two expectations of one kind on one request: keep ids unique
            name += f"#{taken + 1}"
        if ok is None:
            outcome = Outcome.ERROR
        elif ok:
            outcome = Outcome.PASS
        else:
            outcome = Outcome.FAIL if level == MUST else Outcome.WARN
        self.results.append(
            scenario_check(
                self.evidence.scenario.id,
                self.evidence.revision.value,
                name,
                rules,
                outcome,
                message,
                level=level,
                step=step,
                expected=expected,
                found=found,
                difference=difference,
                detail=detail,
            )
        )

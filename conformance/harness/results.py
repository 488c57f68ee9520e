"""What a check of a scenario run says, and how results are built.

`CheckResult` is one check's outcome with its stable id and rules;
`Judge` collects the results of one run, giving each its id and its
outcome from the rules' level (`level_of`). The checks themselves live in
`reqfold.conformance.harness.checks` and `reqfold.conformance.harness.stability`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from reqfold.conformance.check import MUST, SHOULD
from reqfold.conformance.harness.evidence import Evidence
from reqfold.conformance.outcomes import Outcome
from reqfold.conformance.rules import load_rules
from reqfold.reference.json_values import JsonObject

BROKEN_RUN = "run"
"""The check name of a scenario run with no verdict (``SCENARIO@REVISION/run``:
the adapter crashed, hung or broke the protocol before the run's end)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckResult:
    """The outcome of one check of one scenario run."""

    check_id: str
    """``scenario@revision/check``: stable across runs (``#2``, ``#3`` tell
    apart two expectations of one kind on one request)."""
    scenario: str
    revision: str
    rules: tuple[str, ...]
    level: str
    outcome: Outcome
    message: str = ""

    def dump(self) -> JsonObject:
        """The JSON form used in reports."""
        return {
            "id": self.check_id,
            "scenario": self.scenario,
            "revision": self.revision,
            "rules": list(self.rules),
            "level": self.level,
            "outcome": self.outcome.value,
            "message": self.message,
        }


def level_of(rules: Sequence[str]) -> str:
    """MUST when any of `rules` is a MUST rule, else SHOULD."""
    registry = load_rules()
    return MUST if any(registry[rule].is_must for rule in rules) else SHOULD


class Judge:
    """Builds the results of one run, with ids that say what was checked."""

    def __init__(self, evidence: Evidence) -> None:
        self.evidence = evidence
        self.prefix = f"{evidence.scenario.id}@{evidence.revision.value}"
        self.results: list[CheckResult] = []
        self.one_shots: frozenset[int] = frozenset()
        """Indexes of captured requests the log checks recognised as no step
        of the log (one-shot requests): ``request`` expectations skip them."""

    def add(
        self,
        name: str,
        rules: Sequence[str],
        ok: bool | None,
        message: str = "",
        *,
        level: str | None = None,
    ) -> None:
        """Record a check; `ok` None is an error (no verdict).

        A failed check fails at its rules' level (`level_of`), or at
        `level` when given: a MUST rule the checker reports at SHOULD level
        (a member-order clause) only warns.
        """
        level = level or level_of(rules)
        check_id = f"{self.prefix}/{name}"
        taken = sum(
            1
            for result in self.results
            if result.check_id == check_id or result.check_id.startswith(check_id + "#")
        )
        if taken:  # two expectations of one kind on one request: keep ids unique
            check_id += f"#{taken + 1}"
        if ok is None:
            outcome = Outcome.ERROR
        elif ok:
            outcome = Outcome.PASS
        else:
            outcome = Outcome.FAIL if level == MUST else Outcome.WARN
        self.results.append(
            CheckResult(
                check_id=check_id,
                scenario=self.evidence.scenario.id,
                revision=self.evidence.revision.value,
                rules=tuple(rules),
                level=level,
                outcome=outcome,
                message=message,
            )
        )

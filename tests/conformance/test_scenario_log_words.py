"""A scenario's ``log/<RULE>`` check says the checker's first finding in
words, with the sides of it the checker gave, and carries it as data."""

from __future__ import annotations

from pathlib import Path

import pytest

from reqfold.conformance.check.findings import Finding
from reqfold.conformance.harness.checks import _broken_rule
from reqfold.conformance.harness.evidence import Evidence
from reqfold.conformance.harness.results import Judge
from reqfold.conformance.harness.scenarios import load_scenarios
from reqfold.reference.revisions import Revision


def logged(finding: Finding) -> Judge:
    scenario = next(s for s in load_scenarios() if s.id == "plain-turns")
    judge = Judge(
        Evidence(
            scenario=scenario,
            revision=Revision("session-prefix"),
            log_path=Path("log.jsonl"),
        )
    )
    _broken_rule(judge, finding, "MUST")
    return judge


@pytest.mark.spec("WRITER-3")
@pytest.mark.parametrize(
    ("expected", "found", "said"),
    [
        (None, '{"tools":{}}', 'line 12, seq 10: a no-op delta (found {"tools":{}})'),
        ("1", None, "line 12, seq 10: a no-op delta (expected 1)"),
        ("1", "2", "line 12, seq 10: a no-op delta (expected 1, found 2)"),
        (None, None, "line 12, seq 10: a no-op delta"),
    ],
)
def test_a_log_check_says_only_the_sides_its_finding_gives(
    expected: str | None, found: str | None, said: str
) -> None:
    finding = Finding(
        rule="WRITER-3",
        level="MUST",
        line=12,
        seq=10,
        message="a no-op delta",
        expected=expected,
        found=found,
        path="$.tools",
    )
    (check,) = logged(finding).results
    assert check.message == said
    assert "None" not in check.message
    assert check.detail == {}
    if expected is None and found is None:
        assert (check.expected, check.found, check.first_difference) == (
            None,
            None,
            None,
        )
    else:
        assert check.expected == {"at": "line 12, seq 10", "value": expected}
        assert check.found == {"at": "line 12, seq 10", "value": found}
        assert check.first_difference == "$.tools"

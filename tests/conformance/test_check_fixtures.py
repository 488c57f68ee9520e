"""Each fixture log breaks its rule and is reported with that rule at its line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reqfold.conformance.check import APPLIED_RULES, check_lines
from reqfold.conformance.rules import load_rules

FIXTURES = Path(__file__).parent / "check_fixtures"
EXPECTED: dict[str, dict[str, object]] = json.loads(
    (FIXTURES / "expected.json").read_text(encoding="utf-8")
)
VALID = sorted((FIXTURES / "valid").glob("*.jsonl"))


def rule_of(name: str) -> str:
    """``WRITER-3-padded-delta.jsonl`` -> ``WRITER-3``."""
    family, number, *_ = name.removesuffix(".jsonl").split("-")
    return f"{family}-{number}"


def check_file(path: Path, **options: object):  # type: ignore[no-untyped-def]
    with path.open("rb") as handle:
        return check_lines(handle, path=str(path), **options)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, id=name, marks=pytest.mark.spec(rule_of(name)))
        for name in sorted(EXPECTED)
    ],
)
def test_fixture_is_reported_with_its_rule_at_its_line(name: str) -> None:
    expected = EXPECTED[name]
    report = check_file(FIXTURES / name)
    hits = [
        f
        for f in report.findings
        if f.rule == rule_of(name) and f.line == expected["line"]
    ]
    assert hits, [(f.rule, f.line, f.message) for f in report.findings]
    assert {f.level for f in hits} == {expected.get("level", "MUST")}
    assert report.ok is (expected.get("level") == "SHOULD")


def test_every_fixture_file_is_listed_and_every_listed_file_exists() -> None:
    on_disk = {path.name for path in FIXTURES.glob("*.jsonl")}
    assert on_disk == set(EXPECTED)


def test_fixture_names_start_with_rule_ids_of_the_spec() -> None:
    rules = load_rules()
    assert {rule_of(name) for name in EXPECTED} <= set(rules)


def test_every_rule_the_checker_applies_has_a_fixture() -> None:
    covered = {rule_of(name) for name in EXPECTED}
    assert set(APPLIED_RULES) - {"CHECK-2"} <= covered


@pytest.mark.spec("FOLD-1", "LOG-7", "WRITER-1", "WRITER-3", "WRITER-4", "PREFIX-6")
@pytest.mark.parametrize("path", VALID, ids=[p.name for p in VALID])
@pytest.mark.parametrize("thorough", [False, True], ids=["fast", "thorough"])
def test_valid_log_passes_with_no_finding(path: Path, thorough: bool) -> None:
    report = check_file(path, thorough=thorough, strict=True)
    assert report.findings == []
    assert report.ok


def test_valid_tour_exercises_what_it_claims() -> None:
    text = (FIXTURES / "valid" / "session-prefix.jsonl").read_text(encoding="utf-8")
    events = [json.loads(line) for line in text.splitlines()[1:]]
    reasons = [e["data"]["reason"] for e in events if e["type"] == "request/header"]
    assert reasons == ["initial", "fallback", "resume"]
    assert any(e["type"] == "request/header-delta" for e in events)
    assert any(isinstance(e.get("surfaceOp"), dict) for e in events)
    assert any(e["type"] == "tool/result" for e in events)
    report = check_file(FIXTURES / "valid" / "session-prefix.jsonl")
    assert report.summary.unknown_types == {"approval/policy": 1}
    assert report.summary.steps_dispatched == 4

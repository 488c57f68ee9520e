"""The scenario expectation kinds as a table: every kind has a row, and each
row's check and reproduction work side by side."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from reqfold.conformance.harness import checks as scenario_checks
from reqfold.conformance.harness.evidence import Evidence, SendRecord
from reqfold.conformance.harness.expectations import (
    KINDS,
    SCENARIO,
    SEND,
    SEND_MEMBERS_NOT_KINDS,
    Declared,
    Judged,
    Kind,
    LoggedTurn,
    judge_expectation,
)
from reqfold.conformance.harness.results import Facts, Judge, passed
from reqfold.conformance.harness.scenarios import (
    SCENARIOS_DIR,
    Scenario,
    load_scenarios,
)
from reqfold.conformance.outcomes import Outcome
from reqfold.conformance.report.reproduction import scenario_reproduction
from reqfold.conformance.verdict import Check
from reqfold.fakes import CapturedRequest
from reqfold.reference.json_values import JsonObject
from reqfold.reference.revisions import Revision

SCHEMA = json.loads((SCENARIOS_DIR / "scenario.schema.json").read_text("utf-8"))


def schema_kinds() -> dict[str, str]:
    """Every kind scenario.schema.json allows, with where it is declared."""
    kinds = {
        variant["properties"]["check"]["const"]: SCENARIO
        for variant in SCHEMA["properties"]["expect"]["items"]["oneOf"]
    }
    found: set[str] = set()  # the send step's expect object, wherever it sits

    def walk(node: object) -> None:
        if isinstance(node, dict):
            expect = node.get("properties", {}).get("expect")
            if isinstance(expect, dict) and expect.get("type") == "object":
                found.update(expect.get("properties", {}))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(SCHEMA)
    kinds.update(dict.fromkeys(found - SEND_MEMBERS_NOT_KINDS, SEND))
    return kinds


def test_every_kind_the_schema_allows_has_a_row_declared_where_the_schema_puts_it() -> (
    None
):
    allowed = schema_kinds()
    assert {"calls", "absent", "request", "end", "requests", "steps"} <= set(allowed)
    assert {name: kind.where for name, kind in KINDS.items()} == allowed


def test_every_kind_a_scenario_uses_has_a_row() -> None:
    used = set()
    for scenario in load_scenarios():
        used.update(str(item["check"]) for item in scenario.expect)
        for step in scenario.steps:
            used.update(set(step.expect) - SEND_MEMBERS_NOT_KINDS)
    assert used <= set(KINDS)


def scenario() -> Scenario:
    """A scenario of two sends, with one expectation of every scenario kind."""
    first = next(s for s in load_scenarios() if s.id == "plain-turns")
    return Scenario(
        id="kinds",
        title="every kind",
        revisions=first.revisions,
        rules=("PREFIX-1",),
        setup={},
        replies=(),
        steps=first.steps,
        expect=(
            {
                "check": "calls",
                "instance": "i1",
                "contributor": "rules",
                "count": 1,
                "rules": ["PREFIX-1"],
            },
            {"check": "absent", "text": "SENTINEL-9", "rules": ["PREFIX-5"]},
            {
                "check": "request",
                "index": 0,
                "send": 1,
                "contains": ["hello"],
                "rules": ["REQ-1"],
            },
        ),
        path=Path("kinds.json"),
    )


def evidence() -> Evidence:
    """Evidence that breaks every expectation of `scenario`."""
    body: JsonObject = {"messages": [{"role": "user", "content": "SENTINEL-9"}]}
    capture = CapturedRequest(
        index=0,
        method="POST",
        path="/v1/chat/completions",
        headers=(),
        raw_body=json.dumps(body).encode(),
        body=body,
        status=200,
        at=0.0,
    )
    send = SendRecord(
        instance="i1",
        prompt="hi",
        turn=1,
        reason={"kind": "error"},
        captures_before=0,
        captures_after=1,
        expect={"end": "completed", "requests": 2, "steps": 2, "rules": ["TURN-1"]},
    )
    found = Evidence(
        scenario=scenario(),
        revision=Revision("session-prefix"),
        log_path=Path("log.jsonl"),
        captures=[capture],
        sends=[send],
    )
    found.calls[("i1", "rules")] = 3
    return found


def failing_checks() -> list[Check]:
    played = evidence()
    judge = Judge(played)
    for kind in KINDS.values():
        if kind.where == SCENARIO:
            for item in played.scenario.expect:
                if item["check"] == kind.name:
                    judge_expectation(judge, kind, Declared(item=item))
        else:
            send = played.sends[0]
            logged = LoggedTurn(turn=1, opened=1)
            judge_expectation(
                judge, kind, Declared(item=send.expect, send=1, logged=logged)
            )
    return judge.results


def test_a_failing_check_of_every_kind_records_what_was_expected_and_found() -> None:
    checks = failing_checks()
    assert {check.detail["expectation"] for check in checks} == set(KINDS)
    for check in checks:
        assert check.outcome is Outcome.FAIL, check.id
        assert check.expected is not None, check.id
        assert check.found is not None, check.id
    by_name = {check.name: check for check in checks}
    assert by_name["send-1/end"].expected == {"end": "completed"}
    assert by_name["send-1/end"].found == {"end": "error"}
    assert by_name["send-1/end"].first_difference == "$.end"
    assert by_name["send-1/steps"].found == {"steps": 1}
    assert by_name["calls/rules@i1"].found == {"calls": 3}
    assert by_name["absent/SENTINEL-9"].found == {"foundIn": ["request 0"]}
    assert by_name["send-1/request-0"].found == {
        "request": 0,
        "messages": [{"role": "user", "content": "SENTINEL-9"}],
    }


@pytest.mark.spec("REQ-1")
def test_a_reproduction_is_made_from_the_check_alone() -> None:
    """No id or message is read: a check renamed keeps its reproduction."""
    check = next(c for c in failing_checks() if c.name == "send-1/requests")
    renamed = Check(
        part=check.part,
        id="anything",
        revision=check.revision,
        rules=check.rules,
        outcome=check.outcome,
        message="",
        step=check.step,
        expected=check.expected,
        found=check.found,
        first_difference=check.first_difference,
    )
    shown = scenario_reproduction(renamed, scenario(), None)
    assert shown.expected == {"requests": 2}
    assert shown.found == {"requests": 1}
    assert shown.first_difference == "$.requests"
    assert shown.subject["step"] == check.step is not None
    steps = shown.subject["steps"]
    assert isinstance(steps, list)
    assert len(steps) == (check.step or 0) + 1


def test_a_passing_check_keeps_no_evidence() -> None:
    played = evidence()
    played.sends[0].reason = {"kind": "completed"}
    judge = Judge(played)
    judge_expectation(
        judge, KINDS["end"], Declared(item=played.sends[0].expect, send=1)
    )
    (check,) = judge.results
    assert check.outcome is Outcome.PASS
    assert (check.expected, check.found, check.step) == (None, None, None)


@pytest.mark.spec("TURN-5")
def test_a_turn_the_log_ends_otherwise_records_both_ends_at_the_send_step() -> None:
    from reqfold.conformance.harness.checks import _turn_checks

    played = evidence()
    played.sends[0].reason = {"kind": "aborted"}
    played.sends[0].expect = {}
    events: list[JsonObject] = [
        {"seq": 1, "type": "turn/start", "data": {"turn": 1}},
        {"seq": 2, "type": "turn/end", "data": {"turn": 1, "reason": {"kind": "x"}}},
    ]
    judge = Judge(played)
    _turn_checks(judge, events)
    (ended,) = judge.results
    assert ended.name == "send-1/ended"
    assert ended.outcome is Outcome.FAIL
    assert ended.expected == {"turn": 1, "end": "aborted"}
    assert ended.found == {"turn": 1, "end": "x"}
    assert ended.first_difference == "$.end"
    assert ended.step == judge.send_step(1) is not None


LOG_OF_ONE_STEP = b"".join(
    json.dumps(line).encode() + b"\n"
    for line in (
        {"kind": "storage", "version": 1},
        {"seq": 1, "type": "turn/start", "data": {"turn": 1}},
        {"seq": 2, "type": "step/start", "data": {"turn": 1, "step": 1}},
        {"seq": 3, "type": "turn/end", "data": {"turn": 1, "reason": {"kind": "x"}}},
    )
)
"""A log whose one turn opened one step: the ``steps`` kind is judged on it."""


def test_the_judge_plays_every_kind_a_scenario_declares() -> None:
    """Through `judge`, as a run does: no kind is left to a hand list."""
    played = evidence()
    played.log = LOG_OF_ONE_STEP
    judged = scenario_checks.judge(played)
    kinds = {str(check.detail.get("expectation")) for check in judged}
    assert set(KINDS) <= kinds
    for check in judged:
        if "expectation" in check.detail:
            assert check.outcome is Outcome.FAIL, check.id


def _captured_check(judge: Judge, declared: Declared) -> Iterator[Judged]:
    """A made-up kind: how many requests were captured."""
    found = len(judge.evidence.captures)
    yield Judged(
        name="captured",
        rules=tuple(declared.item["rules"]),
        outcome=passed(found == declared.item["count"]),
        message=f"{found} request(s) captured, expected {declared.item['count']}",
        seen=found,
    )


def test_a_new_scenario_kind_is_judged_by_its_row_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One row added to `KINDS` is judged in a full run and in a broken one,
    with no other list to edit (its check decides what a partial run proves)."""
    captured = Kind(
        name="captured",
        where=SCENARIO,
        check=_captured_check,
        reproduce=lambda judge, declared, judged: Facts(
            expected={"captured": declared.item["count"]},
            found={"captured": judged.seen},
        ),
        round=2,
    )
    monkeypatch.setitem(KINDS, "captured", captured)  # type: ignore[arg-type]
    played = evidence()
    item: JsonObject = {"check": "captured", "count": 5, "rules": ["REQ-1"]}
    played.scenario = replace(played.scenario, expect=(*played.scenario.expect, item))
    for judged in (scenario_checks.judge(played), scenario_checks.judge_leaks(played)):
        (check,) = [c for c in judged if c.detail.get("expectation") == "captured"]
        assert check.outcome is Outcome.FAIL
        assert check.found == {"captured": 1}
        in_rounds = [
            c.detail["expectation"]
            for c in judged
            if KINDS[str(c.detail.get("expectation", "end"))].where == SCENARIO
        ]
        assert in_rounds[-1] == "captured"  # the last round

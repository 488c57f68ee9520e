"""The harness half of the suite: scenario files, the driver, the checks, the runner.

The reference must pass every scenario, in process and as a child process;
every kind of check must fail when the evidence shows the breach it looks
for (here by changing a real run's evidence; the known-bad harnesses of
tests/conformance/test_bad_harnesses.py show the same end to end).
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from reqfold.conformance.adapters.connection import StdioConnection
from reqfold.conformance.adapters.inprocess import InProcessHarness
from reqfold.conformance.adapters.messages import (
    check_notification,
    check_params,
    registry,
)
from reqfold.conformance.harness.checks import judge
from reqfold.conformance.harness.driver import ScenarioDriver
from reqfold.conformance.harness.evidence import Evidence
from reqfold.conformance.harness.runner import run_scenarios
from reqfold.conformance.harness.scenarios import (
    SCENARIOS_DIR,
    ScenarioError,
    load_scenario,
    load_scenarios,
    scenario_files,
)
from reqfold.conformance.outcomes import Outcome
from reqfold.conformance.verdict import Check
from reqfold.fakes import FakeProvider
from reqfold.fakes.server import running_server
from reqfold.reference.revisions import Revision

ROOT = Path(__file__).resolve().parents[2]


def by_id(scenario_id: str) -> Any:
    return next(s for s in load_scenarios() if s.id == scenario_id)


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[FakeProvider, str]]:
    fake = FakeProvider("deepseek")
    with running_server(fake) as url:
        yield fake, url


def play(
    served: tuple[FakeProvider, str], tmp_path: Path, scenario_id: str, revision: str
) -> Evidence:
    fake, url = served
    harness = InProcessHarness(timeout=10)
    try:
        harness.initialize()
        driver = ScenarioDriver(harness, fake, url, tmp_path)
        return driver.run(by_id(scenario_id), Revision(revision))
    finally:
        harness.close()


@pytest.fixture(scope="module")
def played(
    served: tuple[FakeProvider, str], tmp_path_factory: pytest.TempPathFactory
) -> Callable[[str, str], Evidence]:
    """The evidence of a scenario under a revision, played once per module:
    the tests only judge it (or a changed copy), so each gets its own copy."""
    runs: dict[tuple[str, str], Evidence] = {}

    def evidence(scenario_id: str, revision: str) -> Evidence:
        key = (scenario_id, revision)
        if key not in runs:
            workdir = tmp_path_factory.mktemp(scenario_id)
            runs[key] = play(served, workdir, scenario_id, revision)
        return copy.deepcopy(runs[key])

    return evidence


def outcomes(results: list[Check]) -> dict[str, Outcome]:
    return {result.name: result.outcome for result in results}


def problems(results: list[Check]) -> list[str]:
    return [
        f"{r.id}: {r.outcome.value}: {r.message}"
        for r in results
        if r.outcome is not Outcome.PASS
    ]


# ------------------------------------------------------------ scenario files


def test_every_scenario_file_matches_the_published_schema() -> None:
    schema = json.loads((SCENARIOS_DIR / "scenario.schema.json").read_text())
    validator = Draft202012Validator(schema, registry=registry())
    errors = [
        f"{path.name}: {list(error.path)}: {error.message}"
        for path in scenario_files()
        for error in validator.iter_errors(json.loads(path.read_text()))
    ]
    assert errors == []


def test_every_scenario_is_in_the_catalogue() -> None:
    catalogue = (ROOT / "docs" / "scenarios.md").read_text()
    missing = [s.id for s in load_scenarios() if f"`{s.id}`" not in catalogue]
    assert missing == []


def test_the_instance_set_up_of_every_scenario_is_valid_protocol_params() -> None:
    for scenario in load_scenarios():
        params = {
            "session": "s",
            "instance": "i",
            "revision": scenario.revisions[0].value,
            "provider": {"baseUrl": "u", "apiKey": "k", "dialect": "deepseek"},
            "system": "",
            "tools": [],
            "contributors": [],
            **scenario.setup,
        }
        assert check_params("instance/start", params) is None, scenario.id


@pytest.mark.parametrize(
    ("change", "complaint"),
    [
        (lambda d: d.update(id="other"), "must be the file name"),
        (lambda d: d["steps"].insert(0, {"send": "x"}), "first step must start"),
        (lambda d: d["steps"].append({"send": "x", "inject": "y"}), "schema"),
        (lambda d: d["steps"].append({"jump": 1}), "schema"),
        (lambda d: d["steps"].append("send"), "schema"),
        (lambda d: d["expect"].append({"check": "vibes"}), "schema"),
        (lambda d: d["expect"].append(7), "schema"),
        (lambda d: d.update(revisions=["final"]), "final"),
    ],
)
def test_a_broken_scenario_file_is_refused_with_its_name_and_the_reason(
    tmp_path: Path, change: Any, complaint: str
) -> None:
    data = json.loads((SCENARIOS_DIR / "plain-turns.json").read_text())
    change(data)
    path = tmp_path / "plain-turns.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ScenarioError, match=complaint) as caught:
        load_scenario(path)
    assert "plain-turns.json" in str(caught.value)


def test_a_scenario_file_that_is_not_json_is_refused_without_a_traceback(
    tmp_path: Path,
) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"id": "broken",')
    with pytest.raises(ScenarioError, match=r"broken\.json: cannot read"):
        load_scenario(path)


def test_scenarios_are_given_again_without_checking_until_a_file_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reqfold.conformance.harness import scenarios

    checked: list[Path] = []
    real = scenarios.load_scenario

    def counting(path: Path) -> Any:
        checked.append(path)
        return real(path)

    monkeypatch.setattr(scenarios, "load_scenario", counting)
    (tmp_path / "seeds").mkdir()
    for name in ("plain-turns.json", "seeded-session-continues.json"):
        (tmp_path / name).write_bytes((SCENARIOS_DIR / name).read_bytes())
    seed = tmp_path / "seeds" / "three-plain-turns.jsonl"
    seed.write_bytes((SCENARIOS_DIR / "seeds" / seed.name).read_bytes())
    first = load_scenarios(tmp_path)
    assert len(checked) == 2
    assert load_scenarios(tmp_path) == first
    assert len(checked) == 2, "the same bytes are not checked again"
    data = json.loads((tmp_path / "plain-turns.json").read_text())
    data["title"] = "The same turns under another title"
    (tmp_path / "plain-turns.json").write_text(json.dumps(data))
    changed, _ = load_scenarios(tmp_path)
    assert changed.title == data["title"]
    seed.unlink()
    with pytest.raises(ScenarioError, match="no seed file"):
        load_scenarios(tmp_path)


def test_a_seed_turned_into_a_folder_or_another_file_loads_the_scenarios_anew(
    tmp_path: Path,
) -> None:
    (tmp_path / "seeds").mkdir()
    name = "seeded-session-continues.json"
    (tmp_path / name).write_bytes((SCENARIOS_DIR / name).read_bytes())
    kept, other = tmp_path / "seeds" / "kept.jsonl", tmp_path / "seeds" / "other"
    kept.write_bytes((SCENARIOS_DIR / "seeds" / "three-plain-turns.jsonl").read_bytes())
    other.write_bytes(kept.read_bytes())
    seed = tmp_path / "seeds" / "three-plain-turns.jsonl"
    seed.symlink_to(kept)
    (first,) = load_scenarios(tmp_path)
    assert first.seed == kept.resolve()
    seed.unlink()
    seed.symlink_to(other)  # the same names in seeds/, the link turned elsewhere
    (again,) = load_scenarios(tmp_path)
    assert again.seed == other.resolve()
    seed.unlink()
    seed.mkdir()
    with pytest.raises(ScenarioError, match="no seed file"):
        load_scenarios(tmp_path)


def test_notifications_are_checked_against_their_schemas() -> None:
    good = {
        "jsonrpc": "2.0",
        "method": "contributor/started",
        "params": {"instance": "i", "contributor": "c", "call": 1},
    }
    assert check_notification(good) is None
    bad = copy.deepcopy(good)
    bad["params"]["call"] = 0
    assert "contributor.started.json" in (check_notification(bad) or "")
    assert "unknown notification" in (check_notification({"method": "x/y"}) or "")


# ------------------------------------------------------------ the reference


@pytest.mark.slow
@pytest.mark.spec("PREFIX-1", "PREFIX-5", "PREFIX-6", "CACHE-1", "CACHE-3")
def test_the_in_process_reference_passes_every_scenario_of_every_revision(
    tmp_path: Path,
) -> None:
    report = run_scenarios(lambda: InProcessHarness(timeout=10), workdir=tmp_path)
    assert report.startup_error is None
    assert problems(report.results) == []
    played = {(r.scenario, r.revision) for r in report.results}
    expected = {
        (s.id, revision.value) for s in load_scenarios() for revision in s.revisions
    }
    assert played == expected


@pytest.mark.slow
@pytest.mark.spec("PREFIX-1", "PREFIX-5", "PREFIX-6", "CACHE-1", "CACHE-3")
def test_the_reference_as_a_child_process_passes_every_scenario_of_every_revision(
    tmp_path: Path,
) -> None:
    command = [sys.executable, "-m", "reqfold.reference.harness_adapter"]
    report = run_scenarios(
        lambda: StdioConnection(command, timeout=10), workdir=tmp_path
    )
    assert report.startup_error is None
    assert problems(report.results) == []
    assert len({(r.scenario, r.revision) for r in report.results}) == sum(
        len(s.revisions) for s in load_scenarios()
    )


@pytest.mark.spec("REQ-1")
def test_a_run_whose_captures_the_fake_dropped_is_no_verdict_not_a_pass(
    tmp_path: Path,
) -> None:
    tiny = FakeProvider("deepseek", capture_max_bytes=1)  # keeps the newest only
    report = run_scenarios(
        lambda: InProcessHarness(timeout=10),
        scenarios=[by_id("plain-turns")],
        revisions=[Revision.SESSION_PREFIX],
        workdir=tmp_path,
        provider=tiny,
    )
    assert [(r.outcome, r.id) for r in report.results] == [
        (Outcome.ERROR, report.results[0].id)
    ]
    assert "dropped 2 of this run's captured requests" in report.results[0].message


# ------------------------------------------------------------ the checks


@pytest.mark.slow
@pytest.mark.spec("CHECK-2", "LOG-2")
def test_a_checker_bug_is_no_verdict_but_a_broken_must_rule_still_fails(
    played: Callable[[str, str], Evidence], monkeypatch: pytest.MonkeyPatch
) -> None:
    from reqfold.conformance.check import Finding, check_lines
    from reqfold.conformance.harness import checks

    evidence = played("plain-turns", "session-prefix")

    def crash(*args: object) -> list[Finding]:
        raise RuntimeError("a bug in a rule")

    # the checker's seam for a crashing rule, given to the judge's checker
    crashing = functools.partial(check_lines, overrides={"request/header": crash})
    monkeypatch.setattr(checks, "check_lines", crashing)
    found = outcomes(judge(evidence))
    assert found["log"] is Outcome.ERROR
    assert not any(check.startswith("log/") for check in found)  # nothing passes
    gapped = dataclasses.replace(
        evidence, log=evidence.log.replace(b'"seq":3,', b'"seq":30,', 1)
    )
    found = outcomes(judge(gapped))
    assert found["log"] is Outcome.ERROR
    assert found["log/LOG-2"] is Outcome.FAIL
    assert all(
        outcome is Outcome.FAIL
        for check, outcome in found.items()
        if check.startswith("log/")
    )


@pytest.mark.slow
@pytest.mark.spec("PREFIX-5")
def test_a_sentinel_in_a_request_or_the_log_fails_the_absent_check(
    played: Callable[[str, str], Evidence],
) -> None:
    evidence = played("prefix-cancel-inside-composition", "session-prefix")
    assert problems(judge(evidence)) == []
    sentinel = "SENTINEL-DEGRADED-7f3a"
    leaked = dataclasses.replace(
        evidence.captures[0],
        raw_body=evidence.captures[0].raw_body.replace(
            b"REAL-CATALOG", sentinel.encode()
        ),
    )
    in_request = dataclasses.replace(evidence, captures=[leaked])
    assert outcomes(judge(in_request))[f"absent/{sentinel}"] is Outcome.FAIL
    in_log = dataclasses.replace(evidence, log=evidence.log + sentinel.encode())
    result = next(r for r in judge(in_log) if r.id.endswith(sentinel))
    assert result.outcome is Outcome.FAIL
    assert "the log (line" in result.message


@pytest.mark.slow
@pytest.mark.spec("PREFIX-1", "PREFIX-5")
def test_a_contributor_called_the_wrong_number_of_times_fails_the_calls_check(
    played: Callable[[str, str], Evidence],
) -> None:
    evidence = played("prefix-cancel-inside-composition", "session-prefix")
    evidence.calls[("i1", "catalog")] = 1
    result = next(r for r in judge(evidence) if "calls/" in r.id)
    assert result.outcome is Outcome.FAIL
    assert "called 1 time(s)" in result.message
    assert result.rules == ("PREFIX-5",)


@pytest.mark.slow
@pytest.mark.spec("PREFIX-5")
def test_a_turn_that_ends_otherwise_fails_when_rules_decide_it_and_errors_when_not(
    played: Callable[[str, str], Evidence],
) -> None:
    evidence = played("prefix-cancel-inside-composition", "session-prefix")
    ruled, plain = evidence.sends
    ruled.reason = {"kind": "error", "message": "boom"}
    plain.reason = {"kind": "error", "message": "provider down"}
    plain.captures_after = plain.captures_before
    found = outcomes(judge(evidence))
    assert found["send-1/end"] is Outcome.FAIL
    assert found["send-2/end"] is Outcome.ERROR
    assert found["send-2/requests"] is Outcome.ERROR


@pytest.mark.slow
@pytest.mark.spec("REQ-1")
def test_a_request_missing_a_text_fails_the_request_check(
    played: Callable[[str, str], Evidence],
) -> None:
    evidence = played("inject-while-idle-joins-the-next-request", "header-events")
    assert problems(judge(evidence)) == []
    first, _ = evidence.captures
    evidence.captures = [first, first]
    found = outcomes(judge(evidence))
    assert found["request-1"] is Outcome.FAIL
    assert found["log/CHECK-1"] is Outcome.FAIL or found["log/REQ-1"] is Outcome.FAIL


@pytest.mark.slow
@pytest.mark.spec("CACHE-1")
def test_a_request_that_does_not_extend_the_previous_one_fails_the_cache_check(
    played: Callable[[str, str], Evidence],
) -> None:
    evidence = played("plain-turns", "session-prefix")
    assert outcomes(judge(evidence))["cache/request-2"] is Outcome.PASS
    third = evidence.captures[2]
    assert third.diagnostic is not None
    diverged = dict(third.diagnostic, relation="diverged", cached_tokens=0)
    diverged["divergence"] = {
        "field": "messages[0].content",
        "char_offset": 9,
        "earlier": "10:00",
        "current": "10:05",
    }
    evidence.captures[2] = dataclasses.replace(third, diagnostic=diverged)  # type: ignore[arg-type]
    result = next(r for r in judge(evidence) if r.id.endswith("cache/request-2"))
    assert result.outcome is Outcome.FAIL
    assert "messages[0].content" in result.message


@pytest.mark.slow
@pytest.mark.spec("JSONL-1")
def test_a_harness_that_writes_no_log_fails(
    played: Callable[[str, str], Evidence],
) -> None:
    evidence = played("plain-turns", "session-prefix")
    evidence.log = b""
    results = judge(evidence)
    assert outcomes(results)["log"] is Outcome.FAIL

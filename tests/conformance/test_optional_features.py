"""Optional harness features: a scenario that needs one the harness lacks is
not covered, listed with its reason, never an error or a failure.

Also what else outside harnesses do that the protocol allows: name their
own log file, write a compaction summary through the session's own key.

The harnesses in ``partial_harnesses/`` are the reference with one feature
taken away (left out of ``initialize``'s ``features``, or declared and
then refused with the "not supported" error, which is an error, not an
excuse) or one such habit, run as real child processes
through ``reqfold run``; the pure parts (what a scenario needs, the
verdict's words) are tested directly.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_in_process import reqfold_here

from reqfold.conformance.adapters.connection import StdioConnection
from reqfold.conformance.harness.driver import (
    FeatureNotSupported,
    ScenarioBroken,
    ScenarioDriver,
)
from reqfold.conformance.harness.features import (
    FEATURES,
    declared_features,
    feature_of_request,
    features_needed,
    missing_features,
    not_declared_reason,
)
from reqfold.conformance.harness.scenarios import Scenario, load_scenarios
from reqfold.conformance.outcomes import NOT_COVERED_REASON, Outcome
from reqfold.conformance.verdict import (
    CONFORMANT,
    Check,
    exit_status,
    verdict_text,
)
from reqfold.fakes import FakeProvider
from reqfold.fakes.server import running_server
from reqfold.reference.revisions import Revision
from reqfold.reference.shells import harness_adapter

ROOT = Path(__file__).resolve().parents[2]
PARTIAL = Path(__file__).parent / "partial_harnesses"
COMPACTION = "compaction-keeps-prefix-and-system"


def scenario(name: str) -> Scenario:
    return next(item for item in load_scenarios() if item.id == name)


def impl(name: str) -> str:
    return shlex.join([sys.executable, str(PARTIAL / f"{name}.py")])


def test_a_scenario_needs_the_features_its_steps_reactions_seed_and_seams_use() -> None:
    assert features_needed(scenario(COMPACTION)) == {"compact", "session-prefix-seam"}
    assert features_needed(scenario("inject-while-idle-joins-the-next-request")) == {
        "inject"
    }
    assert "seed" in features_needed(scenario("seeded-session-continues"))
    assert features_needed(scenario("step-start-append-joins-the-next-request")) >= {
        "step-start-seam"
    }
    assert features_needed(scenario("plain-turns")) == frozenset()
    assert features_needed(scenario("cancel-mid-tool")) == {"blocking-tools"}


def test_an_adapter_that_lists_no_features_declares_those_the_protocol_had() -> None:
    assert declared_features({"capabilities": ["harness"]}) == frozenset(FEATURES) - {
        "blocking-tools"
    }
    assert declared_features({"features": ["inject"]}) == {"inject"}


def test_the_features_a_scenario_misses_are_named_in_words() -> None:
    declared = frozenset(FEATURES) - {"compact"}
    missing = missing_features(scenario(COMPACTION), declared)
    assert missing == ["compact"]
    assert not_declared_reason(missing) == "no on-demand compaction declared"


def test_only_optional_requests_can_be_refused_as_not_supported() -> None:
    assert feature_of_request("instance/compact", {}) == "compact"
    assert feature_of_request("session/open", {"seed": "s.jsonl"}) == "seed"
    assert feature_of_request("session/open", {"log": "s.jsonl"}) is None
    assert feature_of_request("instance/send", {"prompt": "hi"}) is None
    assert feature_of_request("instance/cancel", {}) is None
    assert (
        feature_of_request("instance/start", {"contributors": [{"seam": "step-start"}]})
        == "step-start-seam"
    )


def test_the_schema_the_reference_and_the_suite_name_the_same_features() -> None:
    schema_path = ROOT / "conformance/adapters/schemas/initialize.result.json"
    schema = json.loads(schema_path.read_text(encoding="utf-8"))
    assert schema["properties"]["features"]["items"]["enum"] == list(FEATURES)
    assert list(FEATURES) == harness_adapter.FEATURES


def check(
    check_id: str, outcome: Outcome, message: str = "", not_covered: str = ""
) -> Check:
    run, _, name = check_id.partition("/")
    return Check(
        part="scenarios",
        id=check_id,
        scenario=run.partition("@")[0],
        name=name,
        revision="session-prefix",
        rules=("PREFIX-7",),
        outcome=outcome,
        message=message,
        level="MUST",
        detail={NOT_COVERED_REASON: not_covered} if not_covered else {},
    )


def test_the_verdict_says_how_many_scenario_runs_it_covers_and_why_not_the_rest() -> (
    None
):
    checks = [
        check("plain-turns@session-prefix/request-0", Outcome.PASS),
        check(
            f"{COMPACTION}@session-prefix/run",
            Outcome.SKIP,
            "words the verdict does not read",
            not_covered="no on-demand compaction declared",
        ),
        check("plain-turns@session-prefix/skipped", Outcome.SKIP, "not covered: x"),
    ]
    status = exit_status(checks)
    assert status == CONFORMANT
    assert verdict_text(status, checks) == (
        "CONFORMANT on 1 of 2 scenario runs; not covered:"
        f" {COMPACTION} (no on-demand compaction declared)"
    )
    broken = [*checks, check("plain-turns@session-prefix/request-1", Outcome.FAIL)]
    assert verdict_text(exit_status(broken), broken) == (
        "NOT CONFORMANT: a MUST rule is broken; not covered:"
        f" {COMPACTION} (no on-demand compaction declared)"
    )


def test_a_verdict_with_every_scenario_covered_is_worded_as_before() -> None:
    checks = [check("plain-turns@session-prefix/request-0", Outcome.PASS)]
    assert verdict_text(exit_status(checks), checks) == "CONFORMANT"


def run(harness: str, tmp_path: Path, *scenarios: str) -> tuple[int, str, Any]:
    report = tmp_path / "run.json"
    status, stdout, _ = reqfold_here(
        "run",
        *("--impl", impl(harness), "--only", "scenarios"),
        *("--revision", "session-prefix", "--report-json", str(report)),
        *(arg for name in scenarios for arg in ("--scenario", name)),
        cwd=ROOT,
    )
    return status, stdout, json.loads(report.read_text(encoding="utf-8"))


@pytest.mark.slow
@pytest.mark.spec("PREFIX-7")
def test_a_harness_declaring_no_features_is_told_each_missing_one_in_plain_words(
    tmp_path: Path,
) -> None:
    steps = "step-start-append-joins-the-next-request"
    status, stdout, report = run(
        "declares_no_features", tmp_path, COMPACTION, steps, "plain-turns"
    )
    reasons = {c["id"]: c["reason"] for c in report["checks"] if c["status"] == "skip"}
    assert reasons == {
        f"{COMPACTION}@session-prefix/run": "not covered: no on-demand compaction"
        " and no session-prefix seam declared",
        f"{steps}@session-prefix/run": "not covered: no step-start seam declared",
    }
    assert "no the " not in stdout
    assert status == 0, stdout


@pytest.mark.slow
@pytest.mark.spec("PREFIX-7")
def test_a_harness_that_declares_no_compaction_is_conformant_on_what_it_covers(
    tmp_path: Path,
) -> None:
    status, stdout, report = run(
        "declares_no_compaction", tmp_path, COMPACTION, "plain-turns"
    )
    assert status == 0, stdout
    assert (
        "Verdict: CONFORMANT on 1 of 2 scenario runs; not covered:"
        f" {COMPACTION} (no on-demand compaction declared)"
    ) in stdout
    (skipped,) = [c for c in report["checks"] if c["status"] == "skip"]
    assert skipped["id"] == f"{COMPACTION}@session-prefix/run"
    assert skipped["reason"] == "not covered: no on-demand compaction declared"
    assert "not covered" in report["verdict"]["text"]


@pytest.mark.slow
@pytest.mark.spec("PREFIX-7")
def test_a_compaction_declared_then_refused_as_not_supported_is_an_error(
    tmp_path: Path,
) -> None:
    status, stdout, report = run(
        "refuses_compaction", tmp_path, COMPACTION, "plain-turns"
    )
    assert status == 3, stdout
    assert not [c for c in report["checks"] if c["status"] == "skip"]
    (error,) = [c for c in report["checks"] if c["status"] == "error"]
    assert error["id"] == f"{COMPACTION}@session-prefix/run"
    assert "declared feature 'compact'" in error["message"]
    assert "not covered" not in report["verdict"]["text"]


@pytest.mark.slow
@pytest.mark.spec("PREFIX-1", "PREFIX-7")
def test_refusing_a_declared_feature_part_way_keeps_the_breach_already_proven(
    tmp_path: Path,
) -> None:
    status, stdout, report = run(
        "recomposes_then_refuses_compaction", tmp_path, COMPACTION
    )
    assert status == 1, stdout
    problems = {c["id"]: c["status"] for c in report["checks"] if c["status"] != "pass"}
    assert problems == {
        f"{COMPACTION}@session-prefix/run": "error",
        f"{COMPACTION}@session-prefix/calls/rules@i1": "fail",
    }


@pytest.mark.slow
@pytest.mark.spec("PREFIX-7")
def test_a_feature_not_declared_and_refused_as_not_supported_is_not_covered(
    tmp_path: Path,
) -> None:
    fake = FakeProvider("deepseek")
    command = [sys.executable, str(PARTIAL / "refuses_compaction.py")]
    with running_server(fake) as url:
        for declared, raised in (
            (frozenset(FEATURES) - {"compact"}, FeatureNotSupported),
            (declared_features({}), ScenarioBroken),
        ):
            connection = StdioConnection(command, timeout=10)
            try:
                connection.initialize()
                driver = ScenarioDriver(connection, fake, url, tmp_path, declared)
                with pytest.raises(ScenarioBroken) as refused:
                    driver.run(scenario(COMPACTION), Revision.SESSION_PREFIX)
            finally:
                connection.close()
            assert type(refused.value) is raised


@pytest.mark.slow
@pytest.mark.spec("PREFIX-5")
def test_a_cancel_refused_as_not_supported_is_an_error_since_every_harness_cancels(
    tmp_path: Path,
) -> None:
    status, stdout, report = run(
        "refuses_cancel", tmp_path, "prefix-cancel-inside-composition"
    )
    assert status == 3, stdout
    errors = [c for c in report["checks"] if c["status"] == "error"]
    assert "every harness must support it" in errors[0]["message"]
    assert not [c for c in report["checks"] if c["status"] == "skip"]


@pytest.mark.slow
@pytest.mark.spec("JSONL-1")
def test_keep_holds_a_copy_of_a_log_the_harness_named_itself(tmp_path: Path) -> None:
    kept = tmp_path / "kept"
    status, stdout, _ = reqfold_here(
        "run",
        *("--impl", impl("picks_its_own_log_name"), "--only", "scenarios"),
        *("--revision", "session-prefix", "--scenario", "plain-turns"),
        *("--keep", str(kept)),
        cwd=ROOT,
    )
    assert status == 0, stdout
    own = kept / "plain-turns.session-prefix.own.jsonl"
    copy = kept / "plain-turns.session-prefix.jsonl"
    assert own.read_bytes() == copy.read_bytes()
    assert (kept / "plain-turns.session-prefix.requests.jsonl").is_file()


@pytest.mark.slow
@pytest.mark.spec("CHECK-1", "WIRE-1", "PREFIX-7")
def test_a_summary_sent_with_the_session_key_is_a_one_shot_warning_not_a_failure(
    tmp_path: Path,
) -> None:
    status, stdout, report = run(
        "summarises_with_the_session_key", tmp_path, COMPACTION
    )
    assert status == 0, stdout
    problems = [c for c in report["checks"] if c["status"] != "pass"]
    assert [(c["id"], c["status"]) for c in problems] == [
        (f"{COMPACTION}@session-prefix/log/CHECK-1", "warn")
    ]
    assert "no step of the log" in problems[0]["message"]


@pytest.mark.slow
def test_an_expected_failure_of_a_scenario_not_covered_is_not_unseen(
    tmp_path: Path,
) -> None:
    expected = tmp_path / "expected.json"
    expected.write_text(
        json.dumps(
            {f"{COMPACTION}@session-prefix/calls/rules@i1": {"reason": "issue 7"}}
        ),
        encoding="utf-8",
    )
    status, stdout, _ = reqfold_here(
        "run",
        *("--impl", impl("declares_no_compaction"), "--only", "scenarios"),
        *("--revision", "session-prefix", "--expected-failures", str(expected)),
        *("--scenario", COMPACTION, "--scenario", "plain-turns"),
        cwd=ROOT,
    )
    assert status == 0, stdout
    assert "not covered" in stdout


@pytest.mark.slow
@pytest.mark.spec("TURN-2")
def test_an_adapter_listing_no_features_is_not_covered_on_blocking_tools(
    tmp_path: Path,
) -> None:
    status, stdout, report = run(
        "refuses_compaction", tmp_path, "cancel-mid-tool", "plain-turns"
    )
    assert status == 0, stdout
    (skipped,) = [c for c in report["checks"] if c["status"] == "skip"]
    assert skipped["id"] == "cancel-mid-tool@session-prefix/run"
    assert skipped["reason"] == "not covered: no blocking tools declared"

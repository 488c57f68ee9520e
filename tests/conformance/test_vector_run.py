"""`reqfold vectors`: the reference passes, known-bad implementations are caught.

Each adapter in ``bad_adapters/`` embodies one realistic bug or breach and
is run as a real child process, exactly as an implementation in another
language would be. The suite must name the broken rules, keep errors
(broken adapters) apart from failures (wrong answers), and survive
crashes, hangs and garbage.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conformance.connection import DirectConnection
from conformance.vector_run import Outcome, run_vectors
from conformance.vectors import iter_cases

BAD = Path(__file__).parent / "bad_adapters"


def run_cli(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    process = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "vectors", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        check=False,
    )
    return process.returncode, process.stdout, process.stderr


def run_bad(name: str, tmp_path: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    env = {**os.environ, "REQFOLD_BAD_STATE": str(tmp_path)}
    impl = f"{sys.executable} {BAD / (name + '.py')}"
    code, out, err = run_cli(
        "--impl", impl, "--timeout", "2", "--format", "json", *extra, env=env
    )
    assert "Traceback" not in err
    return code, json.loads(out)


def failing_rules(report: dict[str, Any]) -> set[str]:
    return {
        rule
        for result in report["results"]
        if result["outcome"] == "fail"
        for rule in result["rules"]
    }


def test_the_in_process_reference_passes_every_vector_of_every_revision() -> None:
    report = run_vectors(DirectConnection)
    counts = report.counts()
    assert counts == {
        "pass": len(list(iter_cases())),
        "warn": 0,
        "fail": 0,
        "error": 0,
        "skip": 0,
    }
    assert report.exit_status() == 0


def test_revisions_the_implementation_does_not_declare_are_skipped_not_failed() -> None:
    class OldImplementation(DirectConnection):
        def initialize(self) -> dict[str, Any]:
            return {**super().initialize(), "revisions": ["header-events"]}

    report = run_vectors(OldImplementation)
    outcomes = {(r.revision, r.outcome) for r in report.results}
    assert ("request-messages", Outcome.SKIP) in outcomes
    assert ("header-events", Outcome.PASS) in outcomes
    assert {o for rev, o in outcomes if rev == "header-events"} == {Outcome.PASS}
    assert report.exit_status() == 0


@pytest.mark.slow
def test_the_reference_adapter_process_is_conformant_and_says_so() -> None:
    code, out, err = run_cli()
    assert code == 0, err
    assert "Verdict: conformant" in out
    assert f"Total: {len(list(iter_cases()))} pass, 0 warn, 0 fail, 0 error" in out


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "broken_rules"),
    [
        pytest.param(
            "anchor_config_equality", {"EQ-2"}, marks=pytest.mark.spec("EQ-2")
        ),
        pytest.param("clamps_system_arm", {"SYS-5"}, marks=pytest.mark.spec("SYS-5")),
        pytest.param(
            "drops_tool_removals", {"TOOLS-4"}, marks=pytest.mark.spec("TOOLS-4")
        ),
        pytest.param(
            "writer_never_falls_back", {"WRITER-4"}, marks=pytest.mark.spec("WRITER-4")
        ),
        pytest.param("keeps_empty_fields", {"HDR-4"}, marks=pytest.mark.spec("HDR-4")),
        pytest.param("bool_is_int", {"JSON-2"}, marks=pytest.mark.spec("JSON-2")),
    ],
)
def test_a_known_bad_implementation_fails_and_the_broken_rule_is_named(
    name: str, broken_rules: set[str], tmp_path: Path
) -> None:
    code, report = run_bad(name, tmp_path)
    assert code == 1
    assert broken_rules <= failing_rules(report)
    assert report["counts"]["error"] == 0
    assert report["counts"]["pass"] > 0


@pytest.mark.slow
@pytest.mark.spec("JSON-3", "HDR-5")
def test_unordered_maps_only_draw_should_warnings_unless_strict(tmp_path: Path) -> None:
    code, report = run_bad("unordered_maps", tmp_path)
    assert code == 0
    assert report["counts"]["fail"] == 0
    assert report["counts"]["warn"] > 0
    strict_code, _ = run_bad("unordered_maps", tmp_path, "--strict")
    assert strict_code == 1


@pytest.mark.slow
def test_every_vector_fails_on_an_implementation_that_answers_everything_wrongly(
    tmp_path: Path,
) -> None:
    code, report = run_bad("contrarian", tmp_path)
    assert code == 1
    by_level = {
        level: {r["outcome"] for r in report["results"] if r["level"] == level}
        for level in ("MUST", "SHOULD")
    }
    assert by_level == {"MUST": {"fail"}, "SHOULD": {"warn"}}


@pytest.mark.slow
def test_a_crashing_adapter_is_an_error_per_case_and_the_run_goes_on(
    tmp_path: Path,
) -> None:
    code, report = run_bad("crashes_on_fold", tmp_path)
    assert code == 3
    errors = [r for r in report["results"] if r["outcome"] == "error"]
    assert errors
    assert {r["method"] for r in errors} == {"codec/fold"}
    assert all(
        "AdapterCrashed" in r["message"] and "exit status 3" in r["message"]
        for r in errors
    )
    others = {r["outcome"] for r in report["results"] if r["method"] != "codec/fold"}
    assert others == {"pass"}


@pytest.mark.slow
def test_a_hang_garbage_and_a_wrong_id_each_cost_one_case_only(tmp_path: Path) -> None:
    code, report = run_bad("misbehaves_once", tmp_path)
    assert code == 3
    messages = [r["message"] for r in report["results"] if r["outcome"] == "error"]
    assert len(messages) == 3
    assert "AdapterTimeout" in messages[0]
    assert "not a JSON line" in messages[1]
    assert "does not echo request id" in messages[2]
    assert report["counts"]["fail"] == 0


@pytest.mark.slow
def test_an_adapter_that_refuses_the_protocol_version_gives_no_verdict(
    tmp_path: Path,
) -> None:
    code, report = run_bad("refuses_version", tmp_path)
    assert code == 3
    assert "VersionMismatch" in report["startupError"]
    assert "version 2" in report["startupError"]
    assert report["results"] == []


@pytest.mark.slow
def test_stderr_output_is_never_a_failure(tmp_path: Path) -> None:
    code, report = run_bad("noisy_stderr", tmp_path)
    assert code == 0
    assert report["counts"]["fail"] == report["counts"]["error"] == 0


@pytest.mark.slow
def test_a_missing_command_and_a_bad_revision_are_reported_without_a_traceback() -> (
    None
):
    code, _, err = run_cli("--impl", "/nonexistent/adapter")
    assert code == 3
    assert "cannot start" in err
    assert "Traceback" not in err
    code, _, err = run_cli("--revision", "r9")
    assert code == 2
    assert "unknown revision 'r9'" in err

"""A scenario run that breaks at a step: its error names the step, and the
reports show no empty expected/found rows for it (nothing to compare)."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest
from cli_in_process import reqfold_here

CRASHES = Path(__file__).parent / "chaos_harnesses" / "crashes_in_second_turn.py"
RUN = "plain-turns@session-prefix/run"


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The four reports of a run whose adapter crashes at step 3 of 4."""
    folder = tmp_path_factory.mktemp("reports")
    impl = shlex.join([sys.executable, str(CRASHES)])
    code, out, err = reqfold_here(
        "run",
        "--impl",
        impl,
        "--only",
        "scenarios",
        "--scenario",
        "plain-turns",
        "--revision",
        "session-prefix",
        "--timeout",
        "2",
        "--report-json",
        str(folder / "r.json"),
        "--report-html",
        str(folder / "r.html"),
        "--report-md",
        str(folder / "r.md"),
        "--junit",
        str(folder / "r.xml"),
        env={"REQFOLD_CHAOS_PIDS": str(folder / "pids")},
        limit=60,
    )
    assert code == 3, out + err
    assert "while step 3 of 4" in out
    return {
        kind: (folder / f"r.{kind}").read_text()
        for kind in ("json", "html", "md", "xml")
    }


def _run_error(report: dict[str, str]) -> dict[str, object]:
    checks = json.loads(report["json"])["checks"]
    [check] = [c for c in checks if c["id"] == RUN]
    assert check["status"] == "error"
    return dict(check)


@pytest.mark.slow
def test_a_run_error_records_the_index_of_the_step_it_broke_at(
    reports: dict[str, str],
) -> None:
    reproduction = _run_error(reports)["reproduction"]
    assert isinstance(reproduction, dict)
    assert reproduction["subject"]["step"] == 2
    assert len(reproduction["subject"]["steps"]) == 3


@pytest.mark.slow
def test_the_html_report_shows_no_null_expected_and_found_for_a_run_error(
    reports: dict[str, str],
) -> None:
    assert 'data-repro="subject"' in reports["html"]
    assert 'data-repro="expected"' not in reports["html"]
    assert 'data-repro="found"' not in reports["html"]


@pytest.mark.slow
def test_the_markdown_and_junit_reports_show_no_null_expected_and_found(
    reports: dict[str, str],
) -> None:
    assert '"subject": {' in reports["md"]
    assert '"expected": null' not in reports["md"]
    assert "expected: null" not in reports["xml"]
    assert "found: null" not in reports["xml"]
    assert "reproduce: " in reports["xml"]

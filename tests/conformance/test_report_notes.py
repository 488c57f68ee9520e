"""The Markdown and HTML reports list under "Not run" only what did not
run; the vector profile line, which tallies checks that ran, goes under
"Also run" (issue 29 item 12). A reproduction says what it found where
the check's message says it (polish: never a bare ``found: null``)."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest
from cli_in_process import reqfold_here

from reqfold.conformance.outcomes import Outcome
from reqfold.conformance.probe.driver import ProbeEvidence, fresh_log_note
from reqfold.conformance.probe.reports import lasting_notes
from reqfold.conformance.report.html import render_html
from reqfold.conformance.report.markdown import render_markdown
from reqfold.conformance.report.model import RunReport, build_report
from reqfold.conformance.report.notes import split_notes
from reqfold.conformance.report.suite import digest_files
from reqfold.conformance.verdict import Check, exit_status, verdict_text

ROOT = Path(__file__).resolve().parents[2]
PROFILE = "strict input validation: 340 of 340 pass, claimed"
LEFT_OUT = "scenarios not run: the implementation does not declare harness"


def test_a_profile_tally_is_a_note_on_what_ran_and_the_rest_did_not_run() -> None:
    other = "extra profile: 3 of 9 pass (6 fail), not claimed (not in the verdict)"
    assert split_notes([LEFT_OUT, PROFILE, other]) == ([LEFT_OUT], [PROFILE, other])
    assert split_notes(["--scenario: no scenario ran, so it chose nothing"]) == (
        ["--scenario: no scenario ran, so it chose nothing"],
        [],
    )


def built(notes: list[str], *, tool: str = "reqfold run") -> RunReport:
    checks = [
        Check(
            part="vectors",
            id="session-prefix/case",
            revision="session-prefix",
            rules=("HDR-1",),
            outcome=Outcome.PASS,
            level="MUST",
        )
    ]
    status = exit_status(checks)
    return build_report(
        suite={
            "version": "0",
            "digest": digest_files([]),
            "vectorFiles": 0,
            "scenarioFiles": 0,
        },
        implementation={"name": "impl", "version": "1"},
        command="impl",
        options={
            "revisions": None,
            "parts": ["vectors"],
            "scenarios": None,
            "strict": False,
        },
        checks=checks,
        reproductions={},
        traces=[],
        notes=notes,
        startup_error=None,
        expected={},
        exit_status=status,
        verdict=verdict_text(status, checks),
        duration=1.0,
        tool=tool,
    )


def test_markdown_lists_the_profile_tally_under_also_run_not_under_not_run() -> None:
    text = render_markdown(built([PROFILE, LEFT_OUT]))
    also, _, rest = text.partition("## Also run")
    assert PROFILE in rest.split("## Not run")[0]
    assert PROFILE not in rest.split("## Not run")[1]
    assert LEFT_OUT in rest.split("## Not run")[1]
    assert PROFILE not in also


def test_html_lists_the_profile_tally_under_also_run_not_under_not_run() -> None:
    text = render_html(built([PROFILE, LEFT_OUT]))
    before, _, after = text.partition("<h2>Not run</h2>")
    assert PROFILE in before.split("<h2>Also run</h2>")[1]
    assert PROFILE not in after
    assert LEFT_OUT in after


FRESH_NOTE = "the workspace changed between the sessions"


def test_a_probes_notes_go_under_notes_in_markdown_never_under_not_run() -> None:
    text = render_markdown(built([FRESH_NOTE], tool="reqfold probe"))
    assert FRESH_NOTE in text.partition("## Notes")[2]
    assert "## Not run" not in text


def test_a_probes_notes_go_under_notes_in_html_never_under_not_run() -> None:
    text = render_html(built([FRESH_NOTE], tool="reqfold probe"))
    assert FRESH_NOTE in text.partition("<h2>Notes</h2>")[2]
    assert "<h2>Not run</h2>" not in text


def test_the_fresh_sessions_log_in_the_deleted_folder_is_left_out_of_the_reports(
    tmp_path: Path,
) -> None:
    fresh = str(tmp_path / "logs" / "fresh.jsonl")
    evidence = ProbeEvidence(
        notes=[FRESH_NOTE, fresh_log_note(fresh)], fresh_log_path=fresh
    )
    assert lasting_notes(evidence, tmp_path) == [FRESH_NOTE]
    assert lasting_notes(evidence, None) == [FRESH_NOTE, fresh_log_note(fresh)]
    elsewhere = tmp_path / "elsewhere"
    assert lasting_notes(evidence, elsewhere) == [FRESH_NOTE, fresh_log_note(fresh)]


def test_a_run_whose_notes_all_ran_has_no_not_run_section() -> None:
    assert "## Not run" not in render_markdown(built([PROFILE]))
    assert "<h2>Not run</h2>" not in render_html(built([PROFILE]))


@pytest.mark.slow
@pytest.mark.spec("PREFIX-5")
def test_an_absent_checks_reproduction_says_where_the_text_was_found(
    tmp_path: Path,
) -> None:
    harness = ROOT / "tests/conformance/bad_harnesses/caches_cancelled_composition.py"
    report = tmp_path / "run.json"
    status, out, err = reqfold_here(
        *("run", "--impl", shlex.join([sys.executable, str(harness)])),
        *("--only", "scenarios", "--revision", "session-prefix"),
        *("--scenario", "prefix-cancel-inside-composition"),
        *("--report-json", str(report)),
    )
    assert status == 1, out + err
    checks = json.loads(report.read_text(encoding="utf-8"))["checks"]
    (absent,) = [c for c in checks if "/absent/" in c["id"]]
    assert absent["status"] == "fail"
    found = absent["reproduction"]["found"]
    assert found is not None
    assert found["foundIn"], found
    for place in found["foundIn"]:
        assert place in absent["message"]

"""``reqfold probe`` with no log looked for: the cache judged from requests alone."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from cli_in_process import reqfold_here
from probe_reports import problems, read_probe_report

pytestmark = pytest.mark.slow

BAD = Path(__file__).parent / "bad_probe_harnesses"
PYTHON = shlex.quote(sys.executable)
HARNESS = f"{PYTHON} {shlex.quote(str(BAD / 'dated_own_state.py'))}"


def probe(*args: str) -> subprocess.CompletedProcess[str]:
    argv = [
        "probe",
        "--base-url-env",
        "OPENAI_BASE_URL",
        "--api-key-env",
        "OPENAI_API_KEY",
        "--ready",
        "> ",
        *args,
    ]
    status, out, err = reqfold_here(*argv)
    return subprocess.CompletedProcess(argv, status, out, err)


def commands(state: Path, day: int) -> list[str]:
    quoted = shlex.quote(str(state))
    return [
        "--cmd",
        f"{HARNESS} --state {quoted}",
        "--resume-cmd",
        f"{HARNESS} --state {quoted} --day {day}",
    ]


@pytest.mark.spec("CACHE-3", "CACHE-2", "STREAM-1")
def test_a_harness_without_a_log_resumed_next_day_is_warned_of_its_date(
    tmp_path: Path,
) -> None:
    report = tmp_path / "r.json"
    result = probe(
        *commands(tmp_path / "state.json", day=1), "--report-json", str(report)
    )
    out = result.stdout
    assert result.returncode == 0, out + result.stderr
    # the terminal's own text: the judgement from requests alone, rendered
    assert "the cache is judged from the requests alone" in out
    assert "date-time" in out
    assert "Current date: 2026-12-06" in out
    assert "Current date: 2026-12-07" in out
    data = read_probe_report(report)
    found = problems(data)
    warned = found["cache/resume-extends"]
    assert (warned["status"], warned["rules"]) == ("warn", ["CACHE-3"])
    assert {check["status"] for check in found.values()} == {"warn"}
    judged = {rule for check in data["checks"] for rule in check["rules"]}
    assert judged.isdisjoint({"JSONL-1", "LOG-1", "CHECK-1"})  # no log rule
    assert "CHECK-3" in judged  # every turn fed was handled all the same
    assert data["verdict"]["exitStatus"] == 0
    assert data["verdict"]["text"].startswith("CONFORMANT")


def test_the_same_harness_resumed_the_same_day_passes_strict(tmp_path: Path) -> None:
    result = probe(*commands(tmp_path / "state.json", day=0), "--strict")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "pass   cache/resume-extends" not in result.stdout  # problems only
    assert "breaks:" not in result.stdout


@pytest.mark.spec("CACHE-3")
def test_a_cause_gate_fails_the_probe(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    result = probe(
        *commands(tmp_path / "state.json", day=1),
        *("--fail-on", "date-time", "--report-json", str(report)),
    )
    assert result.returncode == 1
    found = problems(read_probe_report(report))
    assert found["gate/fail-on"]["status"] == "fail"


def test_without_a_log_place_or_a_ready_prompt_the_probe_says_what_it_needs() -> None:
    argv = ["probe", "--base-url-env", "X", "--cmd", "true"]
    status, _, err = reqfold_here(*argv)
    assert status == 2
    assert "--ready TEXT (its prompt) paces the turns" in err

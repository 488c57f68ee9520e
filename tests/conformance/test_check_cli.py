"""``reqfold check`` as a real child process: exit codes, formats, errors."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "check_fixtures"
VALID = FIXTURES / "valid" / "session-prefix.jsonl"
CAPTURE = FIXTURES / "requests" / "session-prefix.capture.jsonl"

pytestmark = pytest.mark.slow


COMMAND = (
    [shutil.which("reqfold")]  # the installed console script
    if shutil.which("reqfold")
    else [sys.executable, "-m", "conformance.cli"]
)


def reqfold(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*COMMAND, "check", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_a_valid_log_exits_zero_and_says_ok() -> None:
    result = reqfold(VALID)
    assert result.returncode == 0, result.stdout + result.stderr
    assert ": ok:" in result.stdout
    assert "Traceback" not in result.stderr


@pytest.mark.spec("WRITER-3")
def test_a_broken_must_rule_exits_one_and_names_rule_line_and_seq() -> None:
    result = reqfold(FIXTURES / "WRITER-3-padded-delta.jsonl")
    assert result.returncode == 1
    assert "line 13, seq 11: error [WRITER-3]" in result.stdout
    assert "expected:" in result.stdout
    assert "found:" in result.stdout


@pytest.mark.spec("LOG-1")
def test_should_findings_warn_and_fail_only_with_strict() -> None:
    path = FIXTURES / "LOG-1-member-order.jsonl"
    assert reqfold(path).returncode == 0
    assert "warning [LOG-1]" in reqfold(path).stdout
    assert reqfold("--strict", path).returncode == 1


def test_json_format_prints_one_object_per_log() -> None:
    broken = FIXTURES / "FOLD-2-delta-before-any-snapshot.jsonl"
    result = reqfold("--format", "json", VALID, broken)
    assert result.returncode == 1
    first, second = (json.loads(line) for line in result.stdout.splitlines())
    assert first["ok"] is True
    assert first["path"] == str(VALID)
    assert first["events"] == 58
    assert first["unknown_types"] == {"approval/policy": 1}
    assert second["ok"] is False
    [violation] = second["violations"]
    assert {k: violation[k] for k in ("rule", "level", "line", "seq")} == {
        "rule": "FOLD-2",
        "level": "MUST",
        "line": 5,
        "seq": 3,
    }
    assert violation["message"]


@pytest.mark.spec("REQ-1", "CHECK-1")
def test_requests_are_compared_with_the_log() -> None:
    assert reqfold(VALID, "--requests", CAPTURE).returncode == 0
    tampered = FIXTURES / "requests" / "session-prefix.tampered-message.capture.jsonl"
    result = reqfold(VALID, "--requests", tampered, "--format", "json")
    assert result.returncode == 1
    assert json.loads(result.stdout)["violations"][0]["rule"] == "REQ-1"


def test_an_unreadable_file_exits_two(tmp_path: Path) -> None:
    result = reqfold(tmp_path / "missing.jsonl")
    assert result.returncode == 2
    assert "cannot read" in result.stdout
    directory = reqfold(tmp_path)
    assert directory.returncode == 2
    assert "Traceback" not in directory.stderr


def test_an_unreadable_capture_exits_two(tmp_path: Path) -> None:
    capture = tmp_path / "capture.jsonl"
    capture.write_text("not json\n")
    result = reqfold(VALID, "--requests", capture)
    assert result.returncode == 2
    assert "line 1" in result.stdout


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--format", "yaml", str(VALID)],
        ["--revision", "final", str(VALID)],
        [str(VALID), str(VALID), "--requests", str(CAPTURE)],
    ],
)
def test_wrong_arguments_exit_two(args: list[str]) -> None:
    result = reqfold(*args)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr


@pytest.mark.spec("JSONL-1", "JSONL-3", "JSON-1")
def test_bad_input_never_prints_a_traceback(tmp_path: Path) -> None:
    paths = []
    for name, data in {
        "empty": b"",
        "bom": b"\xef\xbb\xbf" + VALID.read_bytes(),
        "binary": bytes(range(256)) * 10,
        "deep": b'{"type":"session","version":0,"id":"s","createdAt":0}\n'
        + b"[" * 200_000
        + b"\n",
        "torn": VALID.read_bytes()[:-30],
    }.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_bytes(data)
        paths.append(path)
    result = reqfold("--format", "json", *paths)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    reports = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(reports) == len(paths)
    for report in reports:
        assert all(v["line"] >= 1 for v in report["violations"])


def test_help_reads_well() -> None:
    result = reqfold("--help")
    assert result.returncode == 0
    for option in ("--requests", "--revision", "--strict", "--format", "--thorough"):
        assert option in result.stdout


def test_a_reader_that_stops_early_gets_no_traceback_and_the_status_so_far(
    tmp_path: Path,
) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_bytes(b"not json\n" * 2000)  # a long report
    child = subprocess.Popen(
        [*COMMAND, "check", broken, broken, broken],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert child.stdout is not None
    assert child.stderr is not None
    child.stdout.readline()
    child.stdout.close()  # like ``| head -1``
    stderr = child.stderr.read().decode()
    child.stderr.close()
    assert child.wait(timeout=60) == 1
    assert "Traceback" not in stderr, stderr

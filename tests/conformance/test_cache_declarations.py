"""``--expect-breaks FILE``: expected breaks declared in a file, one per line."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from cache_sessions import SYSTEM, Session
from cli_in_process import reqfold_here

from reqfold.conformance.cache.declarations import (
    DeclarationError,
    read_expected_breaks,
)


def check_here(*args: object) -> subprocess.CompletedProcess[str]:
    argv = ["check", *map(str, args)]
    status, out, err = reqfold_here(*argv, limit=60)
    return subprocess.CompletedProcess(argv, status, out, err)


def test_each_line_declares_an_index_and_why_blank_lines_skipped() -> None:
    lines = ['{"index": 3, "why": "compaction"}', "", '{"index": 7}']
    assert read_expected_breaks(lines) == {
        3: "compaction",
        7: "declared in --expect-breaks",
    }


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("not json", "line 2: not a JSON object"),
        ("[1]", "line 2: not a JSON object"),
        ('{"why": "x"}', 'line 2: "index" must be a whole number, 0 or more'),
        ('{"index": true}', 'line 2: "index" must be a whole number, 0 or more'),
        ('{"index": -1}', 'line 2: "index" must be a whole number, 0 or more'),
        ('{"index": 4, "why": 5}', 'line 2: "why" must be a string'),
        ('{"index": 1}', "line 2: index 1 declared twice (first on line 1)"),
        ('{"index": 4, "reason": "x"}', 'line 2: unknown member(s) "reason"'),
    ],
)
def test_a_bad_line_is_named_with_its_number(line: str, said: str) -> None:
    with pytest.raises(DeclarationError) as raised:
        read_expected_breaks(['{"index": 1, "why": "a"}', line])
    assert str(raised.value) == said


@pytest.fixture
def edited_system(tmp_path: Path) -> Path:
    """A capture whose request 2 edits the system text: a CACHE-1 failure."""
    session = Session()
    session.turn("turn 0")
    session.turn("turn 1")
    session.system = SYSTEM + "\nAlso be kind."
    session.turn("turn 2")
    path = tmp_path / "requests.jsonl"
    path.write_text("\n".join(session.lines()) + "\n", encoding="utf-8")
    return path


@pytest.mark.spec("STREAM-5")
def test_a_break_declared_in_the_file_is_expected_with_its_why(
    edited_system: Path, tmp_path: Path
) -> None:
    assert check_here("--requests", edited_system).returncode == 1
    declared = tmp_path / "breaks.jsonl"
    declared.write_text(json.dumps({"index": 2, "why": "/model"}) + "\n")
    result = check_here(
        "--requests", edited_system, "--expect-breaks", declared, "--format", "json"
    )
    assert result.returncode == 0, result.stderr
    (broken,) = json.loads(result.stdout)["breaks"]
    assert (broken["index"], broken["expected"]) == (2, "/model")


@pytest.mark.spec("STREAM-5")
def test_a_flag_for_the_same_index_wins_over_the_file(
    edited_system: Path, tmp_path: Path
) -> None:
    declared = tmp_path / "breaks.jsonl"
    declared.write_text(json.dumps({"index": 2, "why": "from the file"}) + "\n")
    result = check_here(
        "--requests",
        edited_system,
        "--expect-breaks",
        declared,
        "--expect-break",
        "2=from the flag",
        "--format",
        "json",
    )
    (broken,) = json.loads(result.stdout)["breaks"]
    assert broken["expected"] == "from the flag"


def test_a_bad_or_missing_declaration_file_is_one_line_with_status_two(
    edited_system: Path, tmp_path: Path
) -> None:
    bad = tmp_path / "breaks.jsonl"
    bad.write_text('{"index": 2}\n{"index": "two"}\n')
    result = check_here("--requests", edited_system, "--expect-breaks", bad)
    assert result.returncode == 2
    assert result.stderr.strip() == (
        f'reqfold check: --expect-breaks {bad}: line 2: "index" must be a whole'
        " number, 0 or more"
    )
    assert result.stdout == ""
    missing = check_here(
        "--requests", edited_system, "--expect-breaks", tmp_path / "none.jsonl"
    )
    assert missing.returncode == 2
    assert "cannot read" in missing.stderr
    assert "Traceback" not in missing.stderr


def test_the_declaration_file_is_refused_beside_a_log(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text("", encoding="utf-8")
    declared = tmp_path / "breaks.jsonl"
    declared.write_text('{"index": 2}\n')
    result = check_here(log, "--expect-breaks", declared)
    assert result.returncode == 2
    assert "judge a capture with no log" in result.stderr

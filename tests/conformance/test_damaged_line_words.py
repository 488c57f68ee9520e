"""One damaged line is described one way by every reader that meets it:
the log reader, the capture reader beside a log, and the capture reader of
``reqfold check --requests`` alone (1-based characters everywhere)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_in_process import reqfold_here

from reqfold.conformance.json_text.damage import line_damage

FIXTURE = Path(__file__).parent / "check_fixtures" / "CACHE-2-clock-across-turns.jsonl"


@pytest.mark.parametrize(
    ("line", "said"),
    [
        (b'{"a":\n', "expecting value at character 6"),
        (b'{"a":\r\n', "expecting value at character 6"),
        (b'{"a" 1}\n', "expecting ':' delimiter at character 6"),
        (b"\xff\n", "invalid UTF-8 at byte 1"),
        (b'{"a": 1}\n', None),
    ],
)
def test_a_line_s_damage_is_said_at_a_1_based_position(
    line: bytes, said: str | None
) -> None:
    assert line_damage(line) == said


def test_every_reader_says_the_same_about_one_damaged_line(tmp_path: Path) -> None:
    damaged = tmp_path / "m1.jsonl"
    damaged.write_bytes(b'{"a":\n')
    words = "expecting value at character 6"
    _, out, _ = reqfold_here("check", str(damaged))
    assert f"damaged line: {words}" in out
    code, _, err = reqfold_here("check", str(FIXTURE), "--requests", str(damaged))
    assert code == 2
    assert err.strip().endswith(f"line 1: not JSON ({words})")
    code, _, err = reqfold_here("check", "--requests", str(damaged))
    assert code == 2
    assert err.strip() == f"reqfold check: {damaged}: line 1: not JSON ({words})"


def test_a_capture_line_of_the_wrong_shape_is_still_not_a_captured_request(
    tmp_path: Path,
) -> None:
    wrong = tmp_path / "m3.jsonl"
    wrong.write_bytes(b'{"index": "x"}\n')
    code, _, err = reqfold_here("check", "--requests", str(wrong))
    assert code == 2
    assert "line 1: not a captured request (" in err


def test_a_damaged_last_line_is_not_said_to_come_before_the_last(
    tmp_path: Path,
) -> None:
    only = tmp_path / "x.jsonl"
    only.write_bytes(b'{"a":\n')
    _, out, _ = reqfold_here("check", str(only))
    [line] = [line for line in out.splitlines() if "[JSONL-4]" in line]
    assert line.endswith("damaged line: expecting value at character 6")


def test_a_damaged_line_before_the_last_still_says_what_follows_may_miss(
    tmp_path: Path,
) -> None:
    log = tmp_path / "x.jsonl"
    log.write_bytes(b'{"a":\n{"b": 1}\n')
    _, out, _ = reqfold_here("check", str(log))
    [line] = [line for line in out.splitlines() if "[JSONL-4]" in line]
    assert line.endswith(
        "; a damaged line before the last makes the file unreadable, and what"
        " follows may miss an event"
    )

"""``reqfold check`` on a file that is no session log says so in one line
(issue 29 item 7), and still checks a log a harness damaged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_in_process import reqfold_here

from reqfold.conformance.check.file_kind import not_a_log

CAPTURED = json.dumps(
    {
        "index": 0,
        "method": "POST",
        "path": "/chat/completions",
        "status": 200,
        "headers": [],
        "body": {},
    }
).encode()
STORAGE = b'{"type":"session","version":0,"id":"s","createdAt":1}'


def test_a_capture_of_requests_is_named_with_a_hint_at_requests() -> None:
    assert not_a_log([CAPTURED, CAPTURED], requests_given=False) == (
        "it is a capture of requests (did you mean --requests?)"
    )
    assert "other way round" in (not_a_log([CAPTURED], requests_given=True) or "")


def test_markdown_and_a_json_report_are_named() -> None:
    assert "Markdown" in (
        not_a_log([b"# reqfold run", b"text"], requests_given=False) or ""
    )
    report = [b"{", b'  "format": "reqfold-run/1",']
    assert "run report" in (not_a_log(report, requests_given=False) or "")


@pytest.mark.parametrize(
    "lines",
    [
        pytest.param([STORAGE, CAPTURED], id="a log line among captures"),
        pytest.param([b"garbage", STORAGE], id="a damaged first line"),
        pytest.param([b'{"type": "session", "vers'], id="a cut first line"),
        pytest.param([b'{"no": "type"}'], id="JSON objects of another shape"),
        pytest.param([], id="an empty file"),
        pytest.param([bytes(range(1, 256))], id="bytes of no known kind"),
        pytest.param([b"[" * 100_000], id="an array too deep to parse"),
    ],
)
def test_a_file_that_may_be_a_log_is_left_to_the_checker(lines: list[bytes]) -> None:
    assert not_a_log(lines, requests_given=False) is None


def write(tmp_path: Path, name: str, text: bytes) -> str:
    path = tmp_path / name
    path.write_bytes(text)
    return str(path)


@pytest.mark.parametrize(
    ("name", "text", "said"),
    [
        (
            "requests.jsonl",
            (CAPTURED + b"\n") * 500,
            "not a session log: it is a capture of requests (did you mean --requests?)",
        ),
        (
            "README.md",
            b"# Title\n\nSome words.\n" * 100,
            "not a session log: none of its first lines is JSON"
            " (it looks like Markdown)",
        ),
        (
            "run.json",
            b'{\n  "format": "reqfold-run/1",\n  "x": 1\n}\n',
            "not a session log: it is a reqfold run report"
            " (reqfold compare reads those)",
        ),
    ],
)
def test_check_on_the_wrong_kind_of_file_says_so_in_one_line_and_exits_2(
    tmp_path: Path, name: str, text: bytes, said: str
) -> None:
    path = write(tmp_path, name, text)
    status, out, err = reqfold_here("check", path)
    assert status == 2
    assert out == ""
    assert err.splitlines() == [f"reqfold check: {path}: {said}"]


@pytest.mark.spec("JSONL-4")
def test_a_log_with_a_damaged_first_line_is_still_checked_and_fails(
    tmp_path: Path,
) -> None:
    path = write(tmp_path, "log.jsonl", b"not json\n" + STORAGE + b"\n")
    status, out, _ = reqfold_here("check", path)
    assert status == 1
    assert "[JSONL-4]" in out

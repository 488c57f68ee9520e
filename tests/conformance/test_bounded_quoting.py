"""What an implementation answered is quoted within a bound, saying what was cut.

`quoting.bounded` on its own, then a real run of a known-bad codec adapter
(`bad_adapters/answers_hugely.py`, a child process) whose wrong answers are
2 MB wide or 900 deep: quoted whole they made 56 MB of stdout and a 348 MB
JSON report for one revision.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest
from cli_in_process import reqfold_here

from reqfold.conformance.quoting import MAX_DEPTH, MAX_ITEMS, MAX_STRING, bounded

ROOT = Path(__file__).resolve().parents[2]
HUGE = shlex.join(
    [sys.executable, str(ROOT / "tests/conformance/bad_adapters/answers_hugely.py")]
)


def depth_of(value: object) -> int:
    if isinstance(value, list):
        return 1 + max((depth_of(item) for item in value), default=0)
    if isinstance(value, dict):
        return 1 + max((depth_of(item) for item in value.values()), default=0)
    return 0


def test_a_value_within_the_bounds_is_kept_as_it_is() -> None:
    value = {"header": {"config": {"model": "m"}, "tools": [{"name": "a"}] * 3}}
    assert bounded(value) == value


def test_a_long_string_keeps_its_start_and_says_how_much_was_cut() -> None:
    assert (
        bounded("x" * (MAX_STRING + 7)) == "x" * MAX_STRING + "<cut: 7 more characters>"
    )


def test_a_long_array_and_a_wide_object_say_how_many_items_were_cut() -> None:
    assert bounded(list(range(MAX_ITEMS + 3)))[-1] == "<cut: 3 more items>"
    wide = bounded({f"k{n}": n for n in range(MAX_ITEMS + 4)})
    assert (len(wide), wide["<cut>"]) == (MAX_ITEMS + 1, "4 more members")


def test_a_deep_value_is_cut_at_the_depth_bound() -> None:
    value: object = 0
    for _ in range(5000):
        value = [value]
    cut = bounded(value)
    assert depth_of(cut) == MAX_DEPTH
    assert "nested too deep" in json.dumps(cut)


@pytest.mark.slow
def test_huge_wrong_answers_are_quoted_within_a_bound_on_the_terminal_and_in_reports(
    tmp_path: Path,
) -> None:
    reports = {
        option: tmp_path / f"run.{option}"
        for option in ("report-json", "report-md", "report-html", "junit")
    }
    status, out, err = reqfold_here(
        *("run", "--impl", HUGE, "--only", "vectors", "--revision", "session-prefix"),
        *(
            arg
            for option, path in reports.items()
            for arg in (f"--{option}", str(path))
        ),
    )
    assert status == 1, err
    assert len(out) < 200_000
    assert "<cut: 1999500 more characters>" in out
    assert "nested too deep" in out
    for path in reports.values():
        assert path.stat().st_size < 1_000_000, path
    checks = json.loads(reports["report-json"].read_text(encoding="utf-8"))["checks"]
    deep = [
        check
        for check in checks
        if check["status"] == "fail"
        and check["reproduction"]["subject"]["method"] == "codec/diff"
    ]
    assert deep
    for check in deep:
        assert check["reproduction"]["firstDifference"] in {"$.result.delta", "$.error"}
        assert depth_of(check["reproduction"]["found"]) <= MAX_DEPTH

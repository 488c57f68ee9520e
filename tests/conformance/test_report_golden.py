"""Golden tests: the four report formats of one run, kept as snapshots.

One short ``reqfold run`` (in the test's process; the harness is a child)
of a known-bad harness (``silent_sliding_window`` on ``plain-turns``: two
failures with their reproductions, a cache chart with its break) writes
the JSON, JUnit, Markdown and HTML reports; each is
compared with its snapshot under ``__snapshots__/test_report_golden/``,
once what differs between machines and runs is masked (durations, the
suite's digest, the interpreter and the checkout's path).

A change of any report's shape or wording fails here; when it is meant,
accept it with ``python3 -m pytest tests/conformance/test_report_golden.py
--snapshot-update`` and commit the changed snapshots with it.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_in_process import reqfold_here
from syrupy.assertion import SnapshotAssertion

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
HARNESS = Path("tests", "conformance", "bad_harnesses", "silent_sliding_window.py")
REPORTS = {
    "json": "--report-json",
    "xml": "--junit",
    "md": "--report-md",
    "html": "--report-html",
}


def masked(text: str) -> str:
    """The report with what varies between machines and runs masked."""
    text = text.replace(sys.executable, "<python>").replace(str(ROOT), "<root>")
    text = re.sub(r"sha256:[0-9a-f]{12,64}", "sha256:<digest>", text)
    return re.sub(r'\btime="[0-9.]+"', 'time="<t>"', text)


def without_durations(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            key: "<duration>" if key == "duration" else without_durations(item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [without_durations(item) for item in value]
    return value


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("reports")
    options = [
        arg for kind, flag in REPORTS.items() for arg in (flag, folder / f"r.{kind}")
    ]
    status, out, err = reqfold_here(
        "run",
        *("--impl", f"{sys.executable} {HARNESS}"),
        *("--only", "scenarios", "--scenario", "plain-turns"),
        *("--revision", "session-prefix", "--quiet", *map(str, options)),
        cwd=ROOT,
    )
    assert status == 1, out + err
    return {
        kind: masked((folder / f"r.{kind}").read_text(encoding="utf-8"))
        for kind in REPORTS
    }


def test_the_json_report_matches_its_snapshot(
    reports: dict[str, str], snapshot: SnapshotAssertion
) -> None:
    assert without_durations(json.loads(reports["json"])) == snapshot


@pytest.mark.parametrize("kind", ["xml", "md", "html"])
def test_the_text_reports_match_their_snapshots(
    reports: dict[str, str], snapshot: SnapshotAssertion, kind: str
) -> None:
    assert reports[kind] == snapshot

"""The report files of a judging command: their options, the check of the
paths given (before the command starts) and writing each one asked for.

Shared by ``reqfold run`` and ``reqfold probe`` (docs/reports.md), which
build the same `RunReport` from their own results; the thin I/O shell
between a report and its files.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Mapping
from pathlib import Path

from reqfold.conformance.interrupts import say_stderr
from reqfold.conformance.report.model import RunReport
from reqfold.conformance.written_files import (
    why_not_writable,
    write_error_text,
    write_whole,
)

REPORTS = {
    "report-json": "the JSON report (format reqfold-run/1, with a JSON Schema)",
    "junit": "JUnit XML (one testcase per check, rule IDs as properties)",
    "report-md": "a Markdown summary (for a CI step summary)",
    "report-html": "a self-contained HTML page (rule x scenario matrix, cache charts)",
}
"""Each report option and what it writes."""

REPORTS_TITLE = "reports (docs/reports.md)"
"""The title of the report options' group in ``--help``."""


def add_report_file_arguments(reports: argparse._ArgumentGroup) -> None:
    """The four report options (`REPORTS`), in the group `reports`."""
    for option, what in REPORTS.items():
        reports.add_argument(f"--{option}", metavar="F", help=f"write {what} to F")


def report_targets(args: argparse.Namespace) -> dict[str, str]:
    """Each report option given, with its file."""
    return {
        option: value
        for option in REPORTS
        if (value := getattr(args, option.replace("-", "_"), None)) is not None
    }


def report_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with the report files asked for, in one line, or None.

    Two reports into one file, or a report over the expected-failures file
    the run reads, would lose one of them: refused.
    """
    claimed: dict[Path, str] = {}
    expected_failures = getattr(args, "expected_failures", None)
    if expected_failures:
        claimed[Path(expected_failures).resolve()] = "--expected-failures"
    for option in REPORTS:
        value = getattr(args, option.replace("-", "_"))
        if value is None:
            continue
        if not value.strip():
            return f"--{option} is empty: give a file to write"
        target = Path(value)
        other = claimed.setdefault(target.resolve(), f"--{option}")
        if other != f"--{option}":
            return f"--{option} {value!r} is the file {other} names: give another"
        if target.is_dir():
            return f"--{option} {value!r} is a folder, not a file"
        if not target.parent.is_dir():
            missing = "is a file" if target.parent.exists() else "does not exist"
            return f"--{option} {value!r}: the folder {str(target.parent)!r} {missing}"
        writable = os.access(target.parent, os.W_OK | os.X_OK) or (
            target.is_file() and os.access(target, os.W_OK)
        )
        if not writable:  # found now, not after the run
            return f"--{option} {value!r}: its folder is not writable"
        why = why_not_writable(target)
        if why is not None:  # what access() cannot tell (root, /sys, a pipe)
            return f"--{option} {value!r} cannot be written: {why}"
    return None


def write_report_files(
    report: RunReport, targets: Mapping[str, str], *, tool: str
) -> bool:
    """Render `report` into each file of `targets` (option -> file); False
    when one could not be written (said on stderr, naming `tool`; every
    other file is written)."""
    from reqfold.conformance.report import html, json_report, junit, markdown

    renderers: dict[str, Callable[[RunReport], str]] = {
        "report-json": json_report.render_json,
        "junit": junit.render_junit,
        "report-md": markdown.render_markdown,
        "report-html": html.render_html,
    }
    written = True
    for option, target in targets.items():
        try:
            # A lone surrogate (vectors hold some) cannot be UTF-8: it is
            # written as its escape, ``\ud800``, which in the JSON report is
            # the JSON escape of the same string.
            text = renderers[option](report)
            write_whole(target, text.encode("utf-8", "backslashreplace"))
        except OSError as error:
            say_stderr(
                f"{tool}: --{option} {target!r} cannot be written:"
                f" {write_error_text(error)}"
            )
            written = False
    return written

"""The report side of ``reqfold run``: its options, the expected-failures
file, and writing every report asked for (docs/reports.md).

The reports themselves are built and rendered by `reqfold.conformance.report`;
this module is the thin shell between them and the command line.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from reqfold.conformance.harness.scenarios import load_scenarios
from reqfold.conformance.interrupts import say_stderr
from reqfold.conformance.run.record import RunRecord
from reqfold.conformance.verdict import status_of
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


def add_report_arguments(parser: argparse.ArgumentParser) -> None:
    """The report options, in a group of their own (docs/reports.md)."""
    reports = parser.add_argument_group("reports (docs/reports.md)")
    for option, what in REPORTS.items():
        reports.add_argument(f"--{option}", metavar="F", help=f"write {what} to F")
    reports.add_argument(
        "--expected-failures",
        metavar="F",
        help='a JSON object keyed by check id, each entry {"reason": ...}: those'
        " checks are expected to fail (xfail); one that passes fails the run",
    )
    reports.add_argument(
        "--quiet",
        action="store_true",
        help="no progress bar (there is none when stderr is not a terminal)",
    )


def report_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with the report files asked for, in one line, or None.

    Two reports into one file, or a report over the expected-failures file
    the run reads, would lose one of them: refused.
    """
    claimed: dict[Path, str] = {}
    if args.expected_failures:
        claimed[Path(args.expected_failures).resolve()] = "--expected-failures"
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


def read_expected_failures(args: argparse.Namespace) -> dict[str, str]:
    """The expected failures file, read and checked; ValueError says what is wrong."""
    if args.expected_failures is None:  # before the imports: they bring hypothesis
        return {}
    from reqfold.conformance.codec.loading import load_cases
    from reqfold.conformance.report.expected import parse_expected, unknown_ids

    path = args.expected_failures
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or error
        raise ValueError(
            f"--expected-failures {path!r} cannot be read: {reason}"
        ) from None
    expected = parse_expected(text, name=f"--expected-failures {path!r}")
    unknown = unknown_ids(expected, load_cases(), load_scenarios())
    if unknown:
        raise ValueError(
            f"--expected-failures {path!r} names no check of this suite:"
            f" {', '.join(unknown)} (a check id is REVISION/CASE,"
            " property/FAMILY/REVISION or SCENARIO@REVISION/CHECK, as reports show)"
        )
    return expected


def unseen_expected(outcome: RunRecord) -> list[str]:
    """Listed ids whose part, scenario and revision ran without such a check."""
    if not outcome.expected:
        return []
    from reqfold.conformance.report.expected import unseen_ids

    judged = {check.revision for check in outcome.checks}
    played = {
        check.run
        for check in outcome.checks
        if check.part == "scenarios" and check.run is not None
    }
    return unseen_ids(
        outcome.expected,
        # a listed case of a profile left out of the verdict is not used
        [*(check.id for check in outcome.checks), *outcome.unjudged],
        played,
        outcome.parts,
        judged,
    )


def write_reports(
    args: argparse.Namespace,
    outcome: RunRecord,
    status: int,
    verdict: str,
    seconds: float,
    *,
    command: str,
    parts: list[str],
) -> int:
    """Build the report and write each file asked for; returns the exit status.

    A file that cannot be written is said on stderr and makes the status 2
    (the verdict is printed above, and every other file is written).
    """
    targets = {
        option: getattr(args, option.replace("-", "_"))
        for option in REPORTS
        if getattr(args, option.replace("-", "_"), None) is not None
    }
    if not targets:
        return status
    from reqfold.conformance.report import html, json_report, junit, markdown
    from reqfold.conformance.report.model import build_report
    from reqfold.conformance.report.suite import suite_identity
    from reqfold.conformance.report.traces import scenario_trace

    expected = outcome.expected
    statuses = {check.id: status_of(check, expected) for check in outcome.checks}
    traces = []
    for key, evidence in outcome.evidence.items():
        mine = [check for check in outcome.checks if check.run == key]
        traces.append(scenario_trace(evidence, mine, statuses))
    report = build_report(
        suite=suite_identity(),
        implementation=outcome.identity,
        command=command,
        options={
            "revisions": args.revision,
            "parts": parts,
            "scenarios": args.scenario,
            "strict": bool(args.strict),
            "profile": getattr(args, "profile", None),
        },
        checks=outcome.checks,
        reproductions=outcome.reproductions,
        traces=traces,
        notes=outcome.notes,
        startup_error=outcome.startup_error,
        expected=expected,
        exit_status=status,
        verdict=verdict,
        duration=seconds,
    )
    renderers: dict[str, Callable[[Any], str]] = {
        "report-json": json_report.render_json,
        "junit": junit.render_junit,
        "report-md": markdown.render_markdown,
        "report-html": html.render_html,
    }
    for option, target in targets.items():
        try:
            # A lone surrogate (vectors hold some) cannot be UTF-8: it is
            # written as its escape, ``\ud800``, which in the JSON report is
            # the JSON escape of the same string.
            text = renderers[option](report)
            write_whole(target, text.encode("utf-8", "backslashreplace"))
        except OSError as error:
            say_stderr(
                f"reqfold run: --{option} {target!r} cannot be written:"
                f" {write_error_text(error)}"
            )
            status = 2
    return status

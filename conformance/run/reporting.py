"""The report side of ``reqfold run``: its options, the expected-failures
file, and writing every report asked for (docs/reports.md).

The reports themselves are built and rendered by `reqfold.conformance.report`;
this module is the thin shell between them and the command line.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from reqfold.conformance.harness.scenarios import load_scenarios
from reqfold.conformance.report.writing import (
    REPORTS_TITLE,
    add_report_file_arguments,
    report_problem,
    report_targets,
    write_report_files,
)
from reqfold.conformance.run.record import RunRecord
from reqfold.conformance.verdict import status_of

__all__ = [
    "add_report_arguments",
    "read_expected_failures",
    "report_problem",  # shared with ``reqfold probe`` (`report.writing`)
    "unseen_expected",
    "write_reports",
]


def add_report_arguments(parser: argparse.ArgumentParser) -> None:
    """The report options, in a group of their own (docs/reports.md)."""
    reports = parser.add_argument_group(REPORTS_TITLE)
    add_report_file_arguments(reports)
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
    targets = report_targets(args)
    if not targets:
        return status
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
    if not write_report_files(report, targets, tool="reqfold run"):
        status = 2
    return status

"""``reqfold compare OLD.json NEW.json``: what changed between two run reports.

Prints the checks newly failing and newly passing and each scenario's
cache hit ratio in both (`reqfold.conformance.report.compare`). Exit status: 0 no
regression, 1 a regression (`Comparison.regression`), 2 a file that cannot
be read or is not a ``reqfold-run/1`` report, or one report is a probe's
and the other a run's (one line says why).
"""

from __future__ import annotations

import argparse
import os
import sys

from reqfold.conformance.report.compare import (
    compare_reports,
    is_probe_report,
    render_comparison,
)
from reqfold.conformance.report.json_report import ReportError, read_report
from reqfold.reference.json_values import JsonObject


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the subcommand's options."""
    parser.add_argument("old", metavar="OLD.json", help="the earlier run's report")
    parser.add_argument("new", metavar="NEW.json", help="the later run's report")


def _read(path: str) -> JsonObject:
    try:
        with open(path, encoding="utf-8") as file:
            text = file.read()
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        raise ReportError(f"{path}: cannot be read: {reason}") from None
    return read_report(text, name=path)


def _mixed_kinds(args: argparse.Namespace, old: JsonObject, new: JsonObject) -> str:
    """Why a probe's report and a run's cannot be compared; "" when both are
    of one kind (their checks share no id: every check would be missing)."""
    if is_probe_report(old) == is_probe_report(new):
        return ""
    probe, other = args.old, args.new
    if is_probe_report(new):
        probe, other = args.new, args.old
    return (
        f"{probe} is a probe's report and {other} a run's:"
        " compare two probes' reports or two runs'"
    )


def run(args: argparse.Namespace) -> int:
    """Compare the two reports; returns the exit status."""
    try:
        old, new = _read(args.old), _read(args.new)
    except ReportError as error:
        print(f"reqfold compare: {error}", file=sys.stderr)
        return 2
    mixed = _mixed_kinds(args, old, new)
    if mixed:
        print(f"reqfold compare: {mixed}", file=sys.stderr)
        return 2
    comparison = compare_reports(old, new)
    status = 1 if comparison.regression else 0
    try:
        for line in render_comparison(old, new, comparison):
            print(line)
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (``| head``): the status still says it all;
        # stdout goes to devnull so the exit flush cannot fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    return status

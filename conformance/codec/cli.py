"""``reqfold vectors``: run the codec vectors against an implementation.

The implementation is an adapter command (docs/adapter-protocol.md),
started as a child process; by default the reference's own adapter. The
verdict covers the ``core`` profile plus what the implementation claims
(``--profile`` chooses instead); the ``strict`` results always get a line
of their own. Exit status: 0 conformant (SHOULD warnings allowed unless
``--strict``), 1 a MUST broken, 2 bad arguments (also ``--revision``
filters that name no revision the implementation declares), 3 no verdict
possible (the adapter would not start, crashed or hung on some case, or no
case ran; or the suite itself failed unexpectedly, which it reports in one
line, never as a traceback), 130 or 143 when interrupted (SIGINT, SIGTERM:
the adapter is killed first). An implementation that did not start is said
in one line with its stderr tail, and no empty totals; a reader of stdout
that leaves (``| head``) changes nothing: the verdict's status stands. The
verdict line is coloured on a terminal, as ``reqfold run``'s.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import sys
from typing import TYPE_CHECKING

from reqfold.conformance.adapters.lifecycle import (
    codec_connector,
    declared_revisions,
    impl_problem,
    timeout_problem,
)
from reqfold.conformance.codec.cases import CORE, PROFILES, STRICT
from reqfold.conformance.codec.runner import (
    VectorReport,
    is_not_run,
    profile_of,
    run_vectors,
)
from reqfold.conformance.interrupts import commit_verdict, run_guarded
from reqfold.conformance.outcomes import MARKS, Outcome
from reqfold.conformance.output import ReaderMayLeave
from reqfold.reference.revisions import Revision, parse_revision

if TYPE_CHECKING:
    from reqfold.conformance.verdict import Check


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the subcommand's options."""
    parser.add_argument(
        "--impl",
        metavar="CMD",
        default=f"{shlex.quote(sys.executable)} -P -m reqfold.reference.adapter",
        help="the adapter command to run (split like a shell would); 'reference'"
        " runs the reference in process (default: the reference's stdio adapter)",
    )
    parser.add_argument(
        "--revision",
        metavar="NAME",
        action="append",
        help="run only this revision's cases (repeatable; default: every revision"
        " the implementation declares)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="how long one request may take before the adapter is killed (10)",
    )
    parser.add_argument("--strict", action="store_true", help="SHOULD warnings fail")
    parser.add_argument(
        "--profile",
        choices=PROFILES,
        default=None,
        help="what the verdict covers: 'core', or 'strict' (core and input"
        " validation); default: core plus what the implementation claims",
    )
    parser.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text for people (default), json for tools",
    )
    parser.add_argument(
        "--show",
        choices=("problems", "all"),
        default="problems",
        help="text format: list only fail/warn/error cases, or every case",
    )


def _print_result(result: Check) -> None:
    rules = ",".join(result.rules)
    profile = profile_of(result)
    shown = "" if profile == CORE else f"  ({profile})"
    print(f"  {MARKS[result.outcome]}  {result.id}  [{rules}]{shown}")
    if result.message:
        print(f"         {result.message}")


def _print_summary(report: VectorReport, strict: bool, failed: list[Check]) -> None:
    identity = report.implementation
    name = f"{identity.get('name', '?')} {identity.get('version', '')}".strip()
    counts = report.counts()
    print()
    print(f"Implementation: {name}")
    print(f"Revisions declared: {', '.join(identity.get('revisions', [])) or 'none'}")
    by_revision: dict[str, dict[str, int]] = {}
    for result in report.results:
        if not report.counted(result):
            continue
        tally = by_revision.setdefault(result.revision, dict.fromkeys(Outcome, 0))
        tally[result.outcome] += 1
    for revision, tally in by_revision.items():
        parts = ", ".join(f"{tally[o]} {o.value}" for o in Outcome if tally[o])
        print(f"  {revision:<17} {parts}")
    total = ", ".join(f"{counts[o.value]} {o.value}" for o in Outcome)
    print(f"Total: {total}")
    print(report.profile_line(STRICT))
    status = report.exit_status(strict=strict)
    # the words of every tool: reqfold run's one function
    from reqfold.conformance.verdict import verdict_text

    counted = [result for result in report.results if report.counted(result)]
    verdict = verdict_text(
        status,
        counted,
        reasons={3: "the implementation could not be run on every case"},
    )
    if report.stopped is not None:
        left = [result for result in report.results if is_not_run(result)]
        judged = sum(report.counted(result) for result in left)
        print(
            f"Stopped: {report.stopped}; the {len(left)} case(s) left were not run"
            f" ({judged} of them in the verdict, counted as errors)"
        )
        if status == 3:
            verdict = f"NO VERDICT: the run stopped ({report.stopped})"
    commit_verdict()
    if failed:  # last, right above the verdict, where they are still on screen
        print()
        print(f"Problems ({len(failed)})")
        for result in failed:
            _print_result(result)
        print()
    _print_verdict(status, verdict)


def _print_verdict(status: int, verdict: str) -> None:
    """The last line, coloured on a terminal (``NO_COLOR`` aside)."""
    from reqfold.conformance.summary import colour_wanted, verdict_line

    colour = colour_wanted(sys.stdout, os.environ)
    print(verdict_line(status, verdict, colour=colour), flush=True)


def run(args: argparse.Namespace) -> int:
    """Run the vectors and print the report; returns the exit status."""
    try:
        revisions = (
            [parse_revision(name) for name in args.revision] if args.revision else None
        )
    except ValueError as error:
        print(f"reqfold vectors: {error}", file=sys.stderr)
        return 2
    problem = impl_problem(args.impl) or timeout_problem(args.timeout)
    if problem is not None:
        print(f"reqfold vectors: {problem}", file=sys.stderr)
        return 2
    return run_guarded("reqfold vectors", lambda: _run_to_stdout(args, revisions))


def _run_to_stdout(args: argparse.Namespace, revisions: list[Revision] | None) -> int:
    """`_run`, with a stdout whose reader may leave: that is no verdict of
    the implementation's, so the run's own status stands."""
    with contextlib.redirect_stdout(ReaderMayLeave(sys.stdout)):
        return _run(args, revisions)


def _run(args: argparse.Namespace, revisions: list[Revision] | None) -> int:
    text = args.format == "text"
    problems = (Outcome.FAIL, Outcome.WARN, Outcome.ERROR)
    held: list[Check] = []
    failed: list[Check] = []
    """The problems, printed last, right above the verdict."""

    def show(result: Check) -> None:
        # With --show all, core results are shown as they come; the others
        # wait until the run knows whether they are judged (the claim comes
        # with initialize). Problems are kept for the end either way.
        if profile_of(result) != CORE:
            held.append(result)
        elif text and not is_not_run(result):
            if args.show == "all":
                _print_result(result)
            if result.outcome in problems:
                failed.append(result)

    report = run_vectors(
        codec_connector(args.impl, args.timeout),
        revisions=revisions,
        on_result=show,
        profile=args.profile,
    )
    missing = _undeclared(report, revisions)
    if missing is not None:
        print(f"reqfold vectors: {missing}", file=sys.stderr)
        return 2
    if text:
        # A profile left out of the verdict is listed with --show all only:
        # its failures are not the contract's (its one line sums them up).
        for result in held:
            judged = report.counted(result)
            if is_not_run(result):
                continue  # counted in the summary, not listed
            if args.show == "all":
                _print_result(result)
            if judged and result.outcome in problems:
                failed.append(result)
    if report.startup_error is not None and text:
        # as reqfold run says it: nothing ran, so no totals to show
        print(
            f"reqfold vectors: the implementation did not start: "
            f"{report.startup_error}",
            file=sys.stderr,
        )
        status = report.exit_status(strict=args.strict)
        commit_verdict()
        _print_verdict(status, "NO VERDICT: the implementation did not start")
        return status
    if text:
        _print_summary(report, args.strict, failed)
    else:
        print(json.dumps(report.dump(), ensure_ascii=False))
    return report.exit_status(strict=args.strict)


def _undeclared(report: VectorReport, revisions: list[Revision] | None) -> str | None:
    """Why nothing ran when every revision asked for is undeclared, or None."""
    if revisions is None or report.startup_error is not None:
        return None
    declared = declared_revisions(report.implementation)
    if any(revision in declared for revision in revisions):
        return None
    asked = ", ".join(revision.value for revision in revisions)
    names = ", ".join(revision.value for revision in declared) or "no revision"
    return (
        f"nothing to run: the implementation does not declare {asked}"
        f" (it declares {names})"
    )


__all__ = ["Revision", "add_arguments", "run"]

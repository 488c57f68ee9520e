"""``reqfold run``: the whole suite against one implementation, with one verdict.

The implementation is an adapter command (docs/adapter-protocol.md); by
default the reference's own harness adapter, run as a child process
exactly as a foreign one is (``--impl reference`` runs it in process
instead). What runs follows what ``initialize`` declares:

* ``codec``: every codec vector (judged: the ``core`` profile plus what
  the implementation claims, or ``--profile``; the ``strict`` results
  always get a note line), then the differential properties (generated
  inputs, compared with the reference);
* ``harness``: every scenario that applies to a declared revision, played
  against the fake provider on 127.0.0.1 and judged.

The output ends with the rules with a problem, the problems and ONE
verdict (`reqfold.conformance.summary`), coloured on a terminal; a
progress bar on stderr while it works, when stderr is a terminal. Reports
(docs/reports.md) are written on request: ``--report-json`` (format
``reqfold-run/1``, with a JSON Schema), ``--junit``, ``--report-md`` and
``--report-html``; ``--expected-failures`` lists checks known to fail,
each with a reason (one that passes fails the run: a stale entry). Exit
status: 0 conformant (SHOULD warnings allowed unless ``--strict``), 1 a
MUST rule is broken, 2 bad arguments (also options that select nothing
the implementation has: zero checks is never a pass), 3 no verdict (the
implementation could not be run, or some check errored and none failed),
130 or 143 when interrupted (SIGINT, SIGTERM), adapters closed first.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import signal
import sys
import time
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reqfold.conformance.adapters.connection import Connection
from reqfold.conformance.adapters.lifecycle import (
    codec_connector,
    declared_revisions,
    describe,
    impl_problem,
    timeout_problem,
)
from reqfold.conformance.adapters.messages import check_result
from reqfold.conformance.codec.cases import PROFILES
from reqfold.conformance.errors import AdapterError, AdapterProtocolError
from reqfold.conformance.harness.runner import ClosableHarness, harness_connector
from reqfold.conformance.harness.scenario_names import (
    scenario_listing,
    unknown_scenarios,
)
from reqfold.conformance.harness.scenarios import (
    Scenario,
    ScenarioError,
    load_scenarios,
)
from reqfold.conformance.interrupts import (
    Interrupted,
    commit_verdict,
    run_guarded,
)
from reqfold.conformance.options import add_show_argument
from reqfold.conformance.outcomes import Outcome
from reqfold.conformance.output import ReaderMayLeave
from reqfold.conformance.run.parts import (
    run_property_part,
    run_scenario_part,
    run_vector_part,
)
from reqfold.conformance.run.progress import Progress
from reqfold.conformance.run.record import RunRecord
from reqfold.conformance.run.reporting import (
    add_report_arguments,
    read_expected_failures,
    report_problem,
    unseen_expected,
    write_reports,
)
from reqfold.conformance.snapshots import options as snapshots
from reqfold.conformance.summary import (
    check_lines,
    colour_wanted,
    count_text,
    kept_lines,
    problem_lines,
    rule_lines,
    verdict_line,
)
from reqfold.conformance.verdict import (
    NO_VERDICT,
    STATUSES,
    Check,
    exit_status,
    rule_table,
    status_of,
    verdict_text,
)
from reqfold.reference.revisions import Revision, parse_revision

if TYPE_CHECKING:
    from reqfold.conformance.snapshots.recorder import SnapshotRecorder

NOTHING_TO_RUN = 2
"""The exit status when the options select nothing the implementation has
(a usage error: zero checks is never a pass)."""

PARTS = ("vectors", "properties", "scenarios")

SNAPSHOT_DIFFS_SHOWN = 3
"""Changed snapshots shown with their diff, unless ``--show all``; the
rest get one line each."""


def default_impl() -> str:
    """The reference's harness adapter as a child process."""
    return f"{shlex.quote(sys.executable)} -P -m reqfold.reference.harness_adapter"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the subcommand's options."""
    add_report_arguments(parser)
    parser.add_argument(
        "--impl",
        metavar="CMD",
        default=None,
        help="the adapter command (split like a shell would); 'reference' runs the"
        " reference in process (default: the reference's harness adapter as a"
        " child process)",
    )
    parser.add_argument(
        "--revision",
        metavar="NAME",
        action="append",
        help="judge only this revision (repeatable; default: every revision the"
        " implementation declares)",
    )
    parser.add_argument(
        "--only",
        metavar="PART",
        action="append",
        choices=PARTS,
        help="run only this part: vectors, properties or scenarios (repeatable)",
    )
    parser.add_argument(
        "--scenario",
        metavar="ID",
        action="append",
        help="play only this scenario (repeatable; a run that plays no scenario"
        " says so in a note)",
    )
    parser.add_argument(
        "--list-scenarios",
        action="store_true",
        help="print every scenario's id, title and revisions, and exit",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="how long one answer or notification may take before the adapter is"
        " declared hung and killed, and a third of what a whole turn may take (10)",
    )
    parser.add_argument(
        "--examples",
        type=int,
        default=None,
        metavar="N",
        help="examples per differential property and revision (default 40)",
    )
    parser.add_argument("--strict", action="store_true", help="SHOULD warnings fail")
    parser.add_argument(
        "--profile",
        choices=PROFILES,
        default=None,
        help="what the vectors' verdict covers: 'core', or 'strict' (core and input"
        " validation); default: core plus what the implementation claims",
    )
    add_show_argument(parser)
    parser.add_argument(
        "--keep",
        metavar="DIR",
        help="keep the logs the harness wrote, and the requests the fake received"
        " for each, in DIR (made if missing; default: a temporary folder)",
    )
    parser.add_argument(
        "--snapshot-dir",
        metavar="DIR",
        help="compare each scenario run's log and requests (times and generated ids"
        " masked) with its snapshot in DIR and report drift; a missing snapshot is"
        " written (DIR is made if missing; docs/snapshots.md)",
    )
    parser.add_argument(
        "--snapshot-update",
        action="store_true",
        help="rewrite the snapshots that drifted (accept the change)",
    )
    parser.add_argument(
        "--snapshot-strict",
        action="store_true",
        help="drift, or a snapshot that cannot be read or written, makes a"
        " conformant run exit 1",
    )


def _usage_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with the arguments, in one line, or None."""
    problem = (
        None if args.impl is None else impl_problem(args.impl)
    ) or timeout_problem(args.timeout)
    if problem is not None:
        return problem
    if args.examples is not None and not (0 < args.examples <= 100_000):
        return "--examples must be between 1 and 100000"
    if args.keep is not None:
        if not args.keep.strip():
            return "--keep is empty: give a folder for the logs"
        keep = args.keep = Path(args.keep)
        if keep.exists() and not keep.is_dir():
            return f"--keep {str(keep)!r} is not a folder"
        try:
            keep.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            return f"--keep {str(keep)!r} cannot be made: {error.strerror or error}"
    return snapshots.usage_problem(args)


def run(args: argparse.Namespace) -> int:
    """Run the suite, print the report; returns the exit status.

    The scenario files are read and checked against their schema (a tenth
    of a second in a fresh process) only after the arguments are found
    good, and only for a run that may play scenarios or names some.
    """
    try:
        revisions = (
            [parse_revision(name) for name in args.revision] if args.revision else None
        )
    except ValueError as error:
        print(f"reqfold run: {error}", file=sys.stderr)
        return 2
    if args.list_scenarios:
        try:
            listing = scenario_listing(load_scenarios())
        except (ValueError, ScenarioError) as error:
            print(f"reqfold run: {error}", file=sys.stderr)
            return 2
        try:
            print("\n".join(listing), flush=True)
        except BrokenPipeError:  # ``| head``: the reader has what it wanted
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
        return 0
    problem = _usage_problem(args) or report_problem(args)
    if problem is not None:
        print(f"reqfold run: {problem}", file=sys.stderr)
        return 2
    try:
        # only a run that may play them, or names some, reads the scenario files
        wanted = "scenarios" in (args.only or PARTS) or bool(args.scenario)
        scenarios = load_scenarios() if wanted else []
    except (ValueError, ScenarioError) as error:
        print(f"reqfold run: {error}", file=sys.stderr)
        return 2
    if args.scenario:
        known = {scenario.id for scenario in scenarios}
        unknown = [name for name in args.scenario if name not in known]
        if unknown:
            said = unknown_scenarios("--scenario", unknown, known)
            print(f"reqfold run: {said}", file=sys.stderr)
            return 2
        scenarios = [s for s in scenarios if s.id in args.scenario]
    try:
        expected = read_expected_failures(args)
    except ValueError as error:
        print(f"reqfold run: {error}", file=sys.stderr)
        return 2
    outcome = RunRecord(expected=expected)
    outcome.progress = Progress(
        sys.stderr, enabled=not args.quiet and _is_terminal(sys.stderr)
    )
    return run_guarded(
        "reqfold run", lambda: _run_reporting(args, revisions, scenarios, outcome)
    )


def _run_reporting(
    args: argparse.Namespace,
    revisions: list[Revision] | None,
    scenarios: list[Scenario],
    outcome: RunRecord,
) -> int:
    """`_run`; an interrupted run still writes the reports asked for, with
    what ran before the interrupt (nothing is lost)."""
    stdout = ReaderMayLeave(sys.stdout)  # a closed stdout is no verdict of theirs
    try:
        with contextlib.redirect_stdout(stdout):
            return _run(args, revisions, scenarios, outcome)
    except KeyboardInterrupt as stop:
        outcome.progress.clear()
        signum = stop.signum if isinstance(stop, Interrupted) else signal.SIGINT
        with contextlib.suppress(Exception, KeyboardInterrupt):
            _write_reports(
                args,
                outcome,
                128 + signum,
                "NO VERDICT: interrupted; the checks below ran before it",
                time.monotonic() - outcome.started,
            )
        raise
    except BaseException:
        outcome.progress.clear()
        raise


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def _connectors(
    impl: str | None, timeout: float
) -> tuple[Callable[[], Connection], Callable[[], ClosableHarness]]:
    command = impl or default_impl()
    return codec_connector(command, timeout), harness_connector(command, timeout)


def _run(
    args: argparse.Namespace,
    revisions: list[Revision] | None,
    scenarios: list[Scenario],
    outcome: RunRecord,
) -> int:
    started = outcome.started
    codec, harness = _connectors(args.impl, args.timeout)
    codec = outcome.recorder.wrap(codec)
    outcome.impl, outcome.show_all = args.impl, args.show == "all"
    try:
        probe = harness()
        try:
            outcome.identity = probe.initialize()
            problem = check_result("initialize", outcome.identity)
            if problem is not None:
                raise AdapterProtocolError(f"the result of initialize {problem}")
        except BaseException:
            probe.close()
            raise
    except AdapterError as error:
        outcome.startup_error = describe(error)
        print(
            f"reqfold run: the implementation did not start: {outcome.startup_error}",
            file=sys.stderr,
        )
        colour = colour_wanted(sys.stdout, os.environ)
        said = "NO VERDICT: the implementation could not be run"
        print(verdict_line(NO_VERDICT, said, colour=colour))
        _write_reports(
            args,
            outcome,
            NO_VERDICT,
            "NO VERDICT: the implementation could not be run",
            time.monotonic() - started,
        )
        return NO_VERDICT
    try:
        return _run_parts(args, revisions, scenarios, outcome, codec, harness, probe)
    finally:
        probe.close()  # at once, unless the scenarios were handed it first


def _needs(part: str) -> str:
    """The capability a part needs the implementation to declare."""
    return "harness" if part == "scenarios" else "codec"


def _run_parts(
    args: argparse.Namespace,
    revisions: list[Revision] | None,
    scenarios: list[Scenario],
    outcome: RunRecord,
    codec: Callable[[], Connection],
    harness: Callable[[], ClosableHarness],
    probe: ClosableHarness,
) -> int:
    """The parts `args` select, given the adapter `probe` that was started
    (and initialized) to read what the implementation declares.

    When the scenarios are the first part to run, they play on `probe`
    first, which saves starting the adapter again; otherwise it is closed
    before any part starts (a codec part starts its own connections).
    """
    started = outcome.started
    identity = outcome.identity
    declared = [revision.value for revision in declared_revisions(identity)]
    capabilities = identity.get("capabilities", [])
    wanted = set(args.only or PARTS)
    runnable = [
        part for part in PARTS if part in wanted and _needs(part) in capabilities
    ]
    hand_over = runnable[:1] == ["scenarios"]
    outcome.progress.parts = len(runnable)
    if not hand_over:
        probe.close()
    if revisions is not None:
        missing = [r.value for r in revisions if r.value not in declared]
        if missing:
            print(
                f"reqfold run: the implementation does not declare {', '.join(missing)}"
                f" (it declares {', '.join(declared) or 'no revision'})",
                file=sys.stderr,
            )
            return 2
    _print_identity(identity)
    outcome.last = time.monotonic()
    show = _shower(args.show, outcome.expected)
    recorder: SnapshotRecorder | None = None
    played = False  # the scenario part ran
    for part in PARTS:
        needs = _needs(part)
        if part not in wanted:
            continue
        if needs not in capabilities:
            outcome.notes.append(
                f"{part} not run: the implementation does not declare {needs!r}"
            )
        elif part == "vectors":
            run_vector_part(outcome, codec, revisions, show, args.profile)
        elif part == "properties":
            run_property_part(
                outcome, codec, revisions, args.examples, show, args.profile
            )
        else:
            played = True
            recorder = snapshots.open_recorder(args)
            run_scenario_part(
                outcome,
                harness,
                revisions,
                scenarios,
                args.keep,
                show,
                recorder,
                started=(probe, identity) if hand_over else None,
            )
            if recorder is not None:
                print()
                detailed = None if args.show == "all" else SNAPSHOT_DIFFS_SHOWN
                for line in recorder.report(detailed=detailed):
                    print(line)
    if recorder is None and getattr(args, "snapshot_dir", None) is not None:
        outcome.notes.append(
            "--snapshot-dir: no scenario ran, so no snapshot was taken or compared"
        )
    if args.scenario and not played:
        outcome.notes.append("--scenario: no scenario ran, so it chose nothing")
    outcome.progress.clear()
    seconds = time.monotonic() - started
    status, verdict = _finish(outcome, args, seconds)
    if recorder is not None and (strict := recorder.exit_status(status)) != status:
        verdict = f"{verdict}, but snapshots drifted (--snapshot-strict)"
        print(f"exit {strict}: snapshots drifted and --snapshot-strict is set")
        status = strict
    return _write_reports(args, outcome, status, verdict, seconds)


def _write_reports(
    args: argparse.Namespace,
    outcome: RunRecord,
    status: int,
    verdict: str,
    seconds: float,
) -> int:
    """Every report asked for (`reqfold.conformance.run.reporting`); the exit status."""
    return write_reports(
        args,
        outcome,
        status,
        verdict,
        seconds,
        command=args.impl or default_impl(),
        parts=[part for part in PARTS if part in set(args.only or PARTS)],
    )


def _shower(mode: str, expected: Mapping[str, str]) -> Callable[[Check], None]:
    """With ``--show all``, every check is printed as it comes; otherwise
    nothing is, and the problems are printed at the end, above the verdict
    (`reqfold.conformance.summary`), where they are still on screen."""

    def show(check: Check) -> None:
        if mode == "all":
            for line in check_lines(check, expected):
                print(line)

    return show


def _print_identity(identity: dict[str, Any]) -> None:
    name = f"{identity.get('name', '?')} {identity.get('version', '')}".strip()
    language = identity.get("language")
    print(
        f"reqfold run: {name}"
        + (f" ({language})" if language else "")
        + f"; revisions: {', '.join(identity.get('revisions', [])) or 'none'};"
        f" capabilities: {', '.join(identity.get('capabilities', [])) or 'none'}",
        flush=True,
    )


def _kept(folder: Path, outcome: RunRecord) -> list[str]:
    """`kept_lines` for the logs the scenarios wrote in `folder`."""
    logs = {key: evidence.log_path for key, evidence in outcome.evidence.items()}
    present = [path for path in logs.values() if path.is_file()]
    failing = next(
        (
            logs[key]
            for check in outcome.checks
            if status_of(check, outcome.expected) in ("fail", "warn", "error")
            and (key := check.run or "") in logs
            and logs[key].is_file()
        ),
        None,
    )
    return kept_lines(folder, present, failing)


def _finish(
    outcome: RunRecord, args: argparse.Namespace, seconds: float
) -> tuple[int, str]:
    """Print the summary, the rule table and the verdict; the status and verdict."""
    checks = outcome.checks
    expected = outcome.expected
    print()
    for part in outcome.parts:
        mine = [check for check in checks if check.part == part]
        tally = Counter(status_of(check, expected) for check in mine)
        parts = ", ".join(
            f"{n} {status}" for status in STATUSES if (n := tally[status])
        )
        print(f"{part:<11} {count_text(len(mine), 'check')}: {parts or 'none ran'}")
    for note in outcome.notes:
        print(f"note: {note}")
    for check in checks:
        state = status_of(check, expected)
        if state == "xfail":
            print(f"xfail: {check.id}: {expected[check.id]}")
        elif state == "xpass":
            print(
                f"STALE: {check.id} passed but is listed as an expected failure"
                f" ({expected[check.id]}): remove the entry"
            )
    if outcome.startup_error:
        print(f"error: the implementation did not start: {outcome.startup_error}")
    if args.keep is not None and "scenarios" in outcome.parts:
        for line in _kept(Path(args.keep), outcome):
            print(line)
    colour = colour_wanted(sys.stdout, os.environ)
    print()
    for line in rule_lines(
        rule_table(checks, expected=expected), show_all=outcome.show_all, colour=colour
    ):
        print(line)
    problems = problem_lines(checks, expected, colour=colour)
    if problems:
        print()
    for line in problems:
        print(line)
    status = exit_status(
        checks,
        strict=args.strict,
        startup_error=outcome.startup_error is not None,
        expected=expected,
    )
    ran = [check for check in checks if check.outcome is not Outcome.SKIP]
    if status == NO_VERDICT and not ran and outcome.startup_error is None:
        status = NOTHING_TO_RUN
    verdict = verdict_text(status, checks, expected)
    unseen = unseen_expected(outcome)
    if unseen:
        status = NOTHING_TO_RUN
        verdict = (
            "NO VERDICT: --expected-failures names checks this run does not have:"
            f" {', '.join(unseen)}"
        )
        print(f"error: {verdict.removeprefix('NO VERDICT: ')}")
    commit_verdict()
    print()
    print(f"{count_text(len(checks), 'check')} in {seconds:.1f} s")
    print(verdict_line(status, verdict, colour=colour))
    return status, verdict

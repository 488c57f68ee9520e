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

The output is a list of problems, a per-rule table and ONE verdict; a
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
import shlex
import signal
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conformance.adapters.connection import (
    Connection,
    StdioConnection,
)
from conformance.adapters.lifecycle import (
    REFERENCE,
    codec_connector,
    declared_revisions,
    describe,
    impl_problem,
    timeout_problem,
)
from conformance.adapters.messages import check_result
from conformance.codec.corpus import PROFILES, STRICT
from conformance.codec.runner import judged_profiles, run_vectors
from conformance.errors import AdapterError, AdapterProtocolError
from conformance.harness.evidence import Evidence
from conformance.harness.results import level_of
from conformance.harness.runner import ClosableHarness, run_scenarios
from conformance.harness.scenarios import ScenarioError, iter_runs, load_scenarios
from conformance.interrupts import (
    Interrupted,
    raise_if_stopped,
    run_guarded,
    say_stderr,
)
from conformance.outcomes import MARKS, Outcome
from conformance.report.model import STATUSES, Reproduction
from conformance.report.reproduction import (
    property_reproduction,
    scenario_reproduction,
    vector_reproduction,
)
from conformance.run.progress import Progress
from conformance.run.recording import Recorder
from conformance.run.verdict import (
    NO_VERDICT,
    Check,
    exit_status,
    render_table,
    rule_table,
    status_of,
    verdict_text,
)
from conformance.snapshots import options as snapshots
from reference.revisions import Revision, parse_revision

if TYPE_CHECKING:
    from conformance.snapshots.recorder import SnapshotRecorder

NOTHING_TO_RUN = 2
"""The exit status when the options select nothing the implementation has
(a usage error: zero checks is never a pass)."""

PARTS = ("vectors", "properties", "scenarios")


def default_impl() -> str:
    """The reference's harness adapter as a child process."""
    return f"{shlex.quote(sys.executable)} -m reference.harness_adapter"


REPORTS = {
    "report-json": "the JSON report (format reqfold-run/1, with a JSON Schema)",
    "junit": "JUnit XML (one testcase per check, rule IDs as properties)",
    "report-md": "a Markdown summary (for a CI step summary)",
    "report-html": "a self-contained HTML page (rule x scenario matrix, cache charts)",
}
"""Each report option and what it writes."""


def _add_report_arguments(parser: argparse.ArgumentParser) -> None:
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


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the subcommand's options."""
    _add_report_arguments(parser)
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
        help="play only this scenario (repeatable)",
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
    parser.add_argument(
        "--show",
        choices=("problems", "all"),
        default="problems",
        help="list only failing, warning and erroring checks, or every check",
    )
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


@dataclass(slots=True)
class _Run:
    """What the parts produced."""

    identity: dict[str, Any] = field(default_factory=dict)
    checks: list[Check] = field(default_factory=list)
    parts: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    startup_error: str | None = None
    expected: dict[str, str] = field(default_factory=dict)
    """Expected failures: check id -> reason."""
    reproductions: dict[str, Reproduction] = field(default_factory=dict)
    evidence: dict[str, Evidence] = field(default_factory=dict)
    unjudged: set[str] = field(default_factory=set)
    """Ids of the vector cases that ran in a profile the verdict does not
    cover: no check of this run, but not unknown to it either."""
    """The evidence of each scenario run played, by ``scenario@revision``."""
    impl: str | None = None
    """The ``--impl`` value, for the reproductions' commands."""
    progress: Progress = field(
        default_factory=lambda: Progress(sys.stderr, enabled=False)
    )
    recorder: Recorder = field(default_factory=Recorder)
    """The codec implementation's answers, for the reproductions."""
    show_all: bool = False
    """``--show all``: every check is printed (the progress bar steps aside)."""
    clock: Callable[[], float] = time.monotonic
    started: float = field(default_factory=time.monotonic)
    last: float = field(default_factory=time.monotonic)
    """When the previous result came (the next one's duration starts there)."""

    def record(
        self,
        part: str,
        check_id: str,
        result: Any,
        show: Callable[[Check], None],
        *,
        message: str | None = None,
        reproduce: Callable[[], Reproduction | None] | None = None,
    ) -> Check:
        """Keep one result of any part as a `Check`, and show it.

        `reproduce` builds the failure's reproduction; it runs only for a
        result that is not a pass or a skip, and a bug in it costs the
        report its reproduction, never the run.
        """
        raise_if_stopped()
        now = self.clock()
        rules = tuple(result.rules)
        check = Check(
            part=part,
            id=check_id,
            revision=result.revision,
            rules=rules,
            outcome=result.outcome,
            message=result.message if message is None else message,
            level=getattr(result, "level", None)
            or ("SHOULD" if result.outcome is Outcome.WARN else level_of(rules)),
            duration=max(now - self.last, 0.0),
        )
        self.last = now
        self.checks.append(check)
        if reproduce is not None and check.outcome in PROBLEM_OUTCOMES:
            try:
                found = reproduce()
            except Exception:  # a bug of ours: the report goes without it
                found = None
            if found is not None:
                self.reproductions[check_id] = found
        shown = self.show_all or check.outcome in PROBLEM_OUTCOMES
        if shown:
            self.progress.clear()
        show(check)
        if shown and self.progress.enabled:
            sys.stdout.flush()
        return check


PROBLEM_OUTCOMES = (Outcome.FAIL, Outcome.WARN, Outcome.ERROR)


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


def _report_problem(args: argparse.Namespace) -> str | None:
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
            return (
                f"--{option} {value!r}: the folder {str(target.parent)!r}"
                " does not exist"
            )
    return None


def _expected_failures(args: argparse.Namespace, scenarios: Any) -> dict[str, str]:
    """The expected failures file, read and checked; ValueError says what is wrong."""
    from conformance.codec.corpus import load_cases
    from conformance.report.expected import parse_expected, unknown_ids

    if args.expected_failures is None:
        return {}
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


def run(args: argparse.Namespace) -> int:
    """Run the suite, print the report; returns the exit status."""
    try:
        revisions = (
            [parse_revision(name) for name in args.revision] if args.revision else None
        )
        scenarios = load_scenarios()
    except (ValueError, ScenarioError) as error:
        print(f"reqfold run: {error}", file=sys.stderr)
        return 2
    problem = _usage_problem(args) or _report_problem(args)
    if problem is not None:
        print(f"reqfold run: {problem}", file=sys.stderr)
        return 2
    if args.scenario:
        known = {scenario.id for scenario in scenarios}
        unknown = [name for name in args.scenario if name not in known]
        if unknown:
            print(
                f"reqfold run: unknown scenario(s): {', '.join(unknown)}",
                file=sys.stderr,
            )
            return 2
        scenarios = [s for s in scenarios if s.id in args.scenario]
    try:
        expected = _expected_failures(args, scenarios)
    except ValueError as error:
        print(f"reqfold run: {error}", file=sys.stderr)
        return 2
    outcome = _Run(expected=expected)
    outcome.progress = Progress(
        sys.stderr, enabled=not args.quiet and _is_terminal(sys.stderr)
    )
    return run_guarded(
        "reqfold run", lambda: _run_reporting(args, revisions, scenarios, outcome)
    )


def _run_reporting(
    args: argparse.Namespace,
    revisions: list[Revision] | None,
    scenarios: Any,
    outcome: _Run,
) -> int:
    """`_run`; an interrupted run still writes the reports asked for, with
    what ran before the interrupt (nothing is lost)."""
    try:
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
    codec = codec_connector(command, timeout)
    if command == REFERENCE:
        from conformance.adapters.inprocess import InProcessHarness

        return codec, lambda: InProcessHarness(timeout=timeout)
    argv = shlex.split(command)
    return codec, lambda: StdioConnection(argv, timeout=timeout)


def _run(
    args: argparse.Namespace,
    revisions: list[Revision] | None,
    scenarios: Any,
    outcome: _Run,
) -> int:
    started = outcome.started
    codec, harness = _connectors(args.impl, args.timeout)
    codec = outcome.recorder.wrap(codec)
    outcome.impl, outcome.show_all = args.impl, args.show == "all"
    try:
        probe = harness()
        try:
            outcome.identity = probe.initialize()
        finally:
            probe.close()
        problem = check_result("initialize", outcome.identity)
        if problem is not None:
            raise AdapterProtocolError(f"the result of initialize {problem}")
    except AdapterError as error:
        outcome.startup_error = describe(error)
        print(
            f"reqfold run: the implementation did not start: {outcome.startup_error}",
            file=sys.stderr,
        )
        print("Verdict: NO VERDICT: the implementation could not be run")
        _write_reports(
            args,
            outcome,
            NO_VERDICT,
            "NO VERDICT: the implementation could not be run",
            time.monotonic() - started,
        )
        return NO_VERDICT
    identity = outcome.identity
    declared = [revision.value for revision in declared_revisions(identity)]
    capabilities = identity.get("capabilities", [])
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
    wanted = set(args.only or PARTS)
    show = _shower(args.show, outcome.expected)
    recorder: SnapshotRecorder | None = None
    for part in PARTS:
        needs = "harness" if part == "scenarios" else "codec"
        if part not in wanted:
            continue
        if needs not in capabilities:
            outcome.notes.append(
                f"{part} not run: the implementation does not declare {needs!r}"
            )
        elif part == "vectors":
            _vectors(outcome, codec, revisions, show, args.profile)
        elif part == "properties":
            _properties(outcome, codec, revisions, args.examples, show)
        else:
            recorder = snapshots.open_recorder(args)
            _scenarios(
                outcome, harness, revisions, scenarios, args.keep, show, recorder
            )
    if recorder is None and getattr(args, "snapshot_dir", None) is not None:
        outcome.notes.append(
            "--snapshot-dir: no scenario ran, so no snapshot was taken or compared"
        )
    outcome.progress.clear()
    seconds = time.monotonic() - started
    status, verdict = _finish(outcome, args, seconds)
    if recorder is not None and (strict := recorder.exit_status(status)) != status:
        verdict = f"{verdict}, but snapshots drifted (--snapshot-strict)"
        print(f"exit {strict}: snapshots drifted and --snapshot-strict is set")
        status = strict
    return _write_reports(args, outcome, status, verdict, seconds)


def _quiet(check: Check) -> None:
    """Show nothing (a case the run never sent)."""


def _shower(mode: str, expected: Mapping[str, str]) -> Callable[[Check], None]:
    def show(check: Check) -> None:
        if mode == "all" or check.outcome in PROBLEM_OUTCOMES:
            rules = ",".join(check.rules)
            status = status_of(check, expected)
            mark = {"xfail": "xfail", "xpass": "XPASS"}.get(
                status, MARKS[check.outcome]
            )
            print(f"  {mark}  {check.part}  {check.id}  [{rules}]")
            for line in check.message.splitlines() or [""]:
                if line:
                    print(f"         {line}")

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


def _vectors(
    outcome: _Run,
    connect: Callable[[], Connection],
    revisions: list[Revision] | None,
    show: Callable[[Check], None],
    profile: str | None = None,
) -> None:
    from conformance.codec.corpus import iter_cases

    outcome.parts.append("vectors")
    selected = list(iter_cases(revisions=revisions))
    cases = {(revision.value, case.id): case for revision, case in selected}
    outcome.progress.start("vectors", len(selected))
    # What the verdict covers is known from the claim `initialize` made when
    # the run began (docs/vectors.md, "Profiles"): results of the other
    # profiles are summed up in one line, never held back, so an interrupt
    # loses nothing.
    judged = judged_profiles(outcome.identity, profile)

    def add(result: Any) -> None:
        check_id = f"{result.revision}/{result.case_id}"
        if result.profile not in judged:
            outcome.unjudged.add(check_id)
            outcome.progress.advance()
            return
        case = cases.get((result.revision, result.case_id))

        def reproduce() -> Reproduction | None:
            if case is None:
                return None
            params = case.request_params(Revision(result.revision))
            found = outcome.recorder.answer(case.method, params)
            return vector_reproduction(
                case, result.revision, found, outcome.impl, profile=profile
            )

        check = outcome.record(
            "vectors",
            check_id,
            result,
            _quiet if result.not_run else show,  # counted, not listed
            reproduce=reproduce,
        )
        outcome.progress.advance(problem=check.outcome in PROBLEM_OUTCOMES)

    report = run_vectors(connect, revisions=revisions, on_result=add, profile=profile)
    if report.startup_error is not None:
        outcome.startup_error = report.startup_error
    else:
        outcome.notes.append(report.profile_line(STRICT))
    if report.stopped is not None:
        outcome.notes.append(
            f"vectors stopped: {report.stopped}; the cases left were not run"
            " (counted as errors)"
        )


def _properties(
    outcome: _Run,
    connect: Callable[[], Connection],
    revisions: list[Revision] | None,
    examples: int | None,
    show: Callable[[Check], None],
) -> None:
    from hypothesis.configuration import set_hypothesis_home_dir

    from conformance.codec import properties

    outcome.parts.append("properties")
    declared = declared_revisions(outcome.identity)
    chosen = declared if revisions is None else [r for r in declared if r in revisions]
    options: dict[str, Any] = {} if examples is None else {"examples": examples}
    total = sum(1 for p in properties.PROPERTIES for r in chosen if r in p.revisions)
    outcome.progress.start("properties", total)

    def add(result: Any) -> None:
        message = result.message
        if result.vector is not None:
            message += "\ncounterexample, as a vector ready to commit:\n"
            message += properties.render_vector(result)

        def reproduce() -> Reproduction | None:
            vector = result.vector
            if vector is None:
                return None
            params = {**vector["params"], "revision": result.revision}
            found = outcome.recorder.answer(result.method, params)
            return property_reproduction(
                vector, result.method, result.revision, found, outcome.impl
            )

        check = outcome.record(
            "properties",
            result.id,
            result,
            show,
            message=message,
            reproduce=reproduce,
        )
        outcome.progress.advance(problem=check.outcome in PROBLEM_OUTCOMES)

    # Hypothesis keeps files under its home folder (./.hypothesis by
    # default): a run must not leave one in the user's repository.
    with tempfile.TemporaryDirectory(prefix="reqfold-hypothesis-") as home:
        set_hypothesis_home_dir(home)
        try:
            properties.run_properties(connect, chosen, on_result=add, **options)
        finally:
            set_hypothesis_home_dir(None)


def _scenarios(
    outcome: _Run,
    connect: Callable[[], ClosableHarness],
    revisions: list[Revision] | None,
    scenarios: Any,
    keep: Path | None,
    show: Callable[[Check], None],
    recorder: SnapshotRecorder | None = None,
) -> None:
    outcome.parts.append("scenarios")
    by_id = {scenario.id: scenario for scenario in scenarios}
    declared = declared_revisions(outcome.identity)
    wanted = declared if revisions is None else [r for r in declared if r in revisions]
    outcome.progress.start("scenarios", len(list(iter_runs(scenarios, wanted))))
    played: set[str] = set()

    def seen(evidence: Evidence) -> None:
        outcome.evidence[f"{evidence.scenario.id}@{evidence.revision.value}"] = evidence
        if recorder is not None:
            recorder.record(evidence)

    def add(result: Any) -> None:
        run_key = f"{result.scenario}@{result.revision}"
        if run_key not in played:
            played.add(run_key)
            outcome.progress.advance()

        def reproduce() -> Reproduction | None:
            scenario = by_id.get(result.scenario)
            if scenario is None:
                return None
            return scenario_reproduction(
                result.check_id,
                scenario,
                result.revision,
                outcome.evidence.get(run_key),
                outcome.impl,
                result.message,
            )

        check = outcome.record(
            "scenarios", result.check_id, result, show, reproduce=reproduce
        )
        if check.outcome in PROBLEM_OUTCOMES:
            outcome.progress.problems += 1

    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
    report = run_scenarios(
        connect,
        revisions=revisions,
        scenarios=scenarios,
        on_result=add,
        workdir=keep,
        on_evidence=seen,
    )
    if report.startup_error is not None:
        outcome.startup_error = report.startup_error
    outcome.notes.extend(report.skipped)
    if recorder is not None:
        print()
        for line in recorder.report():
            print(line)


def _finish(outcome: _Run, args: argparse.Namespace, seconds: float) -> tuple[int, str]:
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
        print(f"{part:<11} {len(mine)} checks: {parts or 'none ran'}")
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
    print()
    print("Rules")
    for line in render_table(rule_table(checks, expected=expected)):
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
    unseen = _unseen_expected(outcome, args)
    if unseen:
        status = NOTHING_TO_RUN
        verdict = (
            "NO VERDICT: --expected-failures names checks this run does not have:"
            f" {', '.join(unseen)}"
        )
        print(f"error: {verdict.removeprefix('NO VERDICT: ')}")
    print()
    print(f"{len(checks)} checks in {seconds:.1f} s")
    print(f"Verdict: {verdict}")
    return status, verdict


def _unseen_expected(outcome: _Run, args: argparse.Namespace) -> list[str]:
    from conformance.report.expected import unseen_ids

    if not outcome.expected:
        return []
    judged = {check.revision for check in outcome.checks}
    played = {
        check.id.partition("/")[0]
        for check in outcome.checks
        if check.part == "scenarios"
    }
    return unseen_ids(
        outcome.expected,
        # a listed case of a profile left out of the verdict is not used
        [*(check.id for check in outcome.checks), *outcome.unjudged],
        played,
        outcome.parts,
        judged,
    )


def _write_reports(
    args: argparse.Namespace, outcome: _Run, status: int, verdict: str, seconds: float
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
    from conformance.report import html, json_report, junit, markdown
    from conformance.report.model import build_report
    from conformance.report.suite import suite_identity
    from conformance.report.traces import scenario_trace

    expected = outcome.expected
    statuses = {check.id: status_of(check, expected) for check in outcome.checks}
    traces = []
    for key, evidence in outcome.evidence.items():
        mine = [check for check in outcome.checks if check.id.startswith(key + "/")]
        traces.append(scenario_trace(evidence, mine, statuses))
    report = build_report(
        suite=suite_identity(),
        implementation=outcome.identity,
        command=args.impl or default_impl(),
        options={
            "revisions": args.revision,
            "parts": [part for part in PARTS if part in set(args.only or PARTS)],
            "scenarios": args.scenario,
            "strict": bool(args.strict),
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
            Path(target).write_bytes(text.encode("utf-8", "backslashreplace"))
        except OSError as error:
            say_stderr(
                f"reqfold run: --{option} {target!r} cannot be written:"
                f" {error.strerror or error}"
            )
            status = 2
    return status

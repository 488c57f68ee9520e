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

The output is a list of problems, a per-rule table and ONE verdict. Exit
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
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.adapters.connection import (
    Connection,
    StdioConnection,
)
from conformance.adapters.lifecycle import (
    REFERENCE,
    codec_connector,
    declared_revisions,
    describe,
)
from conformance.adapters.messages import check_result
from conformance.codec.corpus import CORE, PROFILES, STRICT
from conformance.codec.runner import run_vectors
from conformance.errors import AdapterError, AdapterProtocolError
from conformance.harness.runner import ClosableHarness, run_scenarios
from conformance.harness.scenarios import ScenarioError, load_scenarios
from conformance.outcomes import MARKS, Outcome
from conformance.run.verdict import (
    BROKEN,
    CONFORMANT,
    NO_VERDICT,
    Check,
    exit_status,
    render_table,
    rule_table,
)
from reference.revisions import Revision, parse_revision

NOTHING_TO_RUN = 2
"""The exit status when the options select nothing the implementation has
(a usage error: zero checks is never a pass)."""

PARTS = ("vectors", "properties", "scenarios")


def default_impl() -> str:
    """The reference's harness adapter as a child process."""
    return f"{shlex.quote(sys.executable)} -m reference.harness_adapter"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the subcommand's options."""
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


@dataclass(slots=True)
class _Run:
    """What the parts produced."""

    identity: dict[str, Any] = field(default_factory=dict)
    checks: list[Check] = field(default_factory=list)
    parts: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    startup_error: str | None = None

    def record(
        self,
        part: str,
        check_id: str,
        result: Any,
        show: Callable[[Check], None],
        *,
        message: str | None = None,
    ) -> None:
        """Keep one result of any part as a `Check`, and show it."""
        if _stopped:
            raise _Interrupted(_stopped[0])
        check = Check(
            part=part,
            id=check_id,
            revision=result.revision,
            rules=tuple(result.rules),
            outcome=result.outcome,
            message=result.message if message is None else message,
        )
        self.checks.append(check)
        show(check)


MAX_TIMEOUT = 86_400.0
"""The longest --timeout taken (a day): more is a typo, and overflows clocks."""


class _Interrupted(KeyboardInterrupt):
    """SIGTERM, raised as an interrupt: hypothesis and asyncio let it through
    (a SystemExit would be taken for a failing example), and every adapter
    and server is closed on the way out."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _usage_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with the arguments, in one line, or None."""
    if args.impl is not None and args.impl != REFERENCE:
        try:
            argv = shlex.split(args.impl)
        except ValueError as error:
            return f"--impl {args.impl!r} cannot be split like a shell would: {error}"
        if not argv:
            return "--impl is empty: give the adapter command (or leave --impl out)"
    if not (0 < args.timeout <= MAX_TIMEOUT):  # also refuses nan
        return f"--timeout must be a number of seconds in (0, {MAX_TIMEOUT:g}]"
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
    return None


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
    problem = _usage_problem(args)
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
    _stopped.clear()
    previous = {
        signum: signal.signal(signum, _terminated)
        for signum in (signal.SIGTERM, signal.SIGINT)
    }
    try:
        return _run(args, revisions, scenarios)
    except KeyboardInterrupt as stop:
        signum = stop.signum if isinstance(stop, _Interrupted) else signal.SIGINT
        _say_stderr("reqfold run: interrupted; no verdict")
        return 128 + signum
    except BrokenPipeError:
        # The reader went away (``| head``): stop quietly; stdout goes to
        # devnull so the exit flush cannot fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return NO_VERDICT
    except Exception as error:  # a bug of ours: say so, and it is no verdict
        _say_stderr(
            f"reqfold run: internal error, no verdict: {type(error).__name__}: {error}"
        )
        return NO_VERDICT
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _say_stderr(text: str) -> None:
    with contextlib.suppress(OSError):
        print(text, file=sys.stderr, flush=True)


_stopped: list[int] = []
"""The signal that asked the run to stop, once one did."""


def _terminated(signum: int, frame: object) -> None:
    """SIGTERM and SIGINT unwind the run, so every adapter and server is closed.

    The exception can be lost when the signal lands in code that swallows
    what it raises (a garbage-collection callback): the signal is also
    remembered, and every result recorded checks for it (`_Run.record`).
    """
    _stopped.append(signum)
    raise _Interrupted(signum)


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
    args: argparse.Namespace, revisions: list[Revision] | None, scenarios: Any
) -> int:
    started = time.monotonic()
    codec, harness = _connectors(args.impl, args.timeout)
    outcome = _Run()
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
        print(
            f"reqfold run: the implementation did not start: {describe(error)}",
            file=sys.stderr,
        )
        print("Verdict: NO VERDICT: the implementation could not be run")
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
    wanted = set(args.only or PARTS)
    show = _shower(args.show)
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
            _scenarios(outcome, harness, revisions, scenarios, args.keep, show)
    return _finish(outcome, args.strict, time.monotonic() - started)


def _shower(mode: str) -> Callable[[Check], None]:
    def show(check: Check) -> None:
        if mode == "all" or check.outcome in (
            Outcome.FAIL,
            Outcome.WARN,
            Outcome.ERROR,
        ):
            rules = ",".join(check.rules)
            print(f"  {MARKS[check.outcome]}  {check.part}  {check.id}  [{rules}]")
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
        f" capabilities: {', '.join(identity.get('capabilities', [])) or 'none'}"
    )


def _vectors(
    outcome: _Run,
    connect: Callable[[], Connection],
    revisions: list[Revision] | None,
    show: Callable[[Check], None],
    profile: str | None = None,
) -> None:
    outcome.parts.append("vectors")
    held: list[Any] = []

    def add(result: Any) -> None:
        # Results of the strict profile wait: whether they count is known
        # once the run has the implementation's claim (docs/vectors.md).
        if result.profile != CORE:
            held.append(result)
            return
        outcome.record("vectors", f"{result.revision}/{result.case_id}", result, show)

    report = run_vectors(connect, revisions=revisions, on_result=add, profile=profile)
    for result in held:
        if report.counted(result):
            add_id = f"{result.revision}/{result.case_id}"
            outcome.record("vectors", add_id, result, show)
    if report.startup_error is not None:
        outcome.startup_error = report.startup_error
    else:
        outcome.notes.append(report.profile_line(STRICT))


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
    # Hypothesis keeps files under its home folder (./.hypothesis by
    # default): a run must not leave one in the user's repository.
    with tempfile.TemporaryDirectory(prefix="reqfold-hypothesis-") as home:
        set_hypothesis_home_dir(home)
        try:
            results = properties.run_properties(connect, chosen, **options)
        finally:
            set_hypothesis_home_dir(None)
    for result in results:
        message = result.message
        if result.vector is not None:
            message += "\ncounterexample, as a vector ready to commit:\n"
            message += properties.render_vector(result)
        outcome.record("properties", result.id, result, show, message=message)


def _scenarios(
    outcome: _Run,
    connect: Callable[[], ClosableHarness],
    revisions: list[Revision] | None,
    scenarios: Any,
    keep: Path | None,
    show: Callable[[Check], None],
) -> None:
    outcome.parts.append("scenarios")

    def add(result: Any) -> None:
        outcome.record("scenarios", result.check_id, result, show)

    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
    report = run_scenarios(
        connect, revisions=revisions, scenarios=scenarios, on_result=add, workdir=keep
    )
    if report.startup_error is not None:
        outcome.startup_error = report.startup_error
    outcome.notes.extend(report.skipped)


def _finish(outcome: _Run, strict: bool, seconds: float) -> int:
    checks = outcome.checks
    print()
    for part in outcome.parts:
        mine = [check for check in checks if check.part == part]
        tally = {o: sum(1 for c in mine if c.outcome is o) for o in Outcome}
        parts = ", ".join(f"{n} {o.value}" for o, n in tally.items() if n)
        print(f"{part:<11} {len(mine)} checks: {parts or 'none ran'}")
    for note in outcome.notes:
        print(f"note: {note}")
    if outcome.startup_error:
        print(f"error: the implementation did not start: {outcome.startup_error}")
    print()
    print("Rules")
    for line in render_table(rule_table(checks)):
        print(line)
    status = exit_status(
        checks, strict=strict, startup_error=outcome.startup_error is not None
    )
    ran = [check for check in checks if check.outcome is not Outcome.SKIP]
    warned = any(check.outcome is Outcome.WARN for check in checks)
    failed = any(check.outcome is Outcome.FAIL for check in checks)
    if status == NO_VERDICT and not ran and outcome.startup_error is None:
        status = NOTHING_TO_RUN
    verdict = {
        CONFORMANT: "CONFORMANT" + (" (with SHOULD warnings)" if warned else ""),
        BROKEN: "NOT CONFORMANT: a MUST rule is broken"
        if failed
        else "NOT CONFORMANT: a SHOULD rule is broken, and --strict counts it",
        NO_VERDICT: "NO VERDICT: some checks could not be run (see the errors above)",
        NOTHING_TO_RUN: "NO VERDICT: nothing was checked: the options select nothing"
        " this implementation has (see the notes above)",
    }[status]
    print()
    print(f"{len(checks)} checks in {seconds:.1f} s")
    print(f"Verdict: {verdict}")
    return status

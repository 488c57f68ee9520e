"""Running the scenarios against a harness adapter, with the fake provider served.

`run_scenarios` starts the fake provider on 127.0.0.1 (a real uvicorn
server: the harness under test is another process), starts the adapter,
plays every scenario that applies to a revision the adapter declares, and
judges each run (`reqfold.conformance.harness.checks`). Like the vector runner it
keeps a broken adapter apart from a broken contract: a crash, a hang or a
protocol error costs the scenario an ``error`` result (no verdict), the
adapter is killed and restarted, and the run goes on; so does a bug of the
suite's own (an unexpected exception while playing or judging a scenario),
which never escapes as a traceback. A sentinel the run already found in
the log or a request before the adapter broke still fails (a leak is not
excused by a hang). Whatever happens, the adapter's process group and the
server are gone when it returns. `harness_connector` turns an ``--impl``
value into what starts the harness (``reqfold run`` and the pytest plugin
both use it). A caller that has already started and initialized the
adapter (``reqfold run`` does, to read what it declares) hands it over as
`started`, so the first scenario does not start a second process.
"""

from __future__ import annotations

import contextlib
import shlex
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from reqfold.conformance.adapters.connection import Connection, StdioConnection
from reqfold.conformance.adapters.lifecycle import (
    REFERENCE,
    declared_revisions,
    describe,
    stderr_block,
)
from reqfold.conformance.adapters.messages import check_result
from reqfold.conformance.adapters.streak import MAX_IN_A_ROW, FailureStreak
from reqfold.conformance.errors import (
    AdapterError,
    AdapterProtocolError,
)
from reqfold.conformance.harness.driver import (
    FeatureNotSupported,
    HarnessConnection,
    ScenarioBroken,
    ScenarioDriver,
)
from reqfold.conformance.harness.evidence import Evidence
from reqfold.conformance.harness.features import (
    declared_features,
    missing_features,
    not_declared_reason,
)
from reqfold.conformance.harness.results import BROKEN_RUN, Facts, scenario_check
from reqfold.conformance.harness.scenarios import Scenario, iter_runs, load_scenarios
from reqfold.conformance.outcomes import NOT_COVERED, NOT_COVERED_REASON, Outcome
from reqfold.conformance.verdict import Check
from reqfold.reference.json_values import JsonObject
from reqfold.reference.revisions import Revision

if TYPE_CHECKING:
    from reqfold.fakes import FakeProvider

# The fake, its server and the checks are imported where scenarios are
# played: a run that plays none (vectors, properties, a bad option) starts
# without them, a fifth of a child ``reqfold run``'s start-up (callgrind).

MAX_RESTARTS = 3

MAX_TIMEOUTS_IN_A_ROW = MAX_IN_A_ROW
"""Scenarios in a row an adapter may time out on (or fail the same way on
after a wait, `FailureStreak`) before the rest are not played: a hung
adapter would otherwise cost every scenario a timeout."""


class ClosableHarness(HarnessConnection, Connection, Protocol):
    """A harness connection the runner can initialize, close, or kill."""

    def kill(self) -> None:
        """End the adapter at once (it broke: asking it to shut down may hang)."""
        ...

    @property
    def stderr_tail(self) -> str:
        """The last lines the adapter wrote to stderr ("" when there is none)."""
        ...


def harness_connector(impl: str, timeout: float) -> Callable[[], ClosableHarness]:
    """What starts (and restarts) the harness implementation `impl` names.

    ``reference`` is the reference in process; anything else is an adapter
    command, split like a shell would (the caller has checked it splits).
    The harness side of `reqfold.conformance.adapters.lifecycle.codec_connector`.
    """
    if impl == REFERENCE:
        from reqfold.conformance.adapters.inprocess import InProcessHarness

        return lambda: InProcessHarness(timeout=timeout)
    argv = shlex.split(impl)
    return lambda: StdioConnection(argv, timeout=timeout)


@dataclass(slots=True, kw_only=True)
class ScenarioReport:
    """Every check result of a scenario run, with the implementation's identity."""

    implementation: JsonObject
    results: list[Check] = field(default_factory=list)
    startup_error: str | None = None
    skipped: list[str] = field(default_factory=list)
    """Scenario runs left out, each with the reason."""


def run_scenarios(
    connect: Callable[[], ClosableHarness],
    *,
    revisions: Iterable[Revision] | None = None,
    scenarios: list[Scenario] | None = None,
    on_result: Callable[[Check], None] | None = None,
    workdir: Path | None = None,
    on_evidence: Callable[[Evidence], None] | None = None,
    provider: FakeProvider | None = None,
    started: tuple[ClosableHarness, JsonObject] | None = None,
) -> ScenarioReport:
    """Play `scenarios` (default: all) against the adapter `connect` starts.

    `on_evidence` sees the evidence of every run that played to the end,
    before its results (``--snapshot-dir`` keeps it). `provider` is the fake
    the runs play against (default: a fresh DeepSeek-dialect one).
    `started` is an adapter already started and initialized, with the
    result of its ``initialize``: the run uses it first (and closes it)
    instead of starting one; `connect` starts the restarts.
    """
    from reqfold.fakes import FakeProvider
    from reqfold.fakes.dialects.registry import DEFAULT_DIALECT
    from reqfold.fakes.server import running_server

    chosen = load_scenarios() if scenarios is None else scenarios
    fake = provider if provider is not None else FakeProvider(DEFAULT_DIALECT)
    with contextlib.ExitStack() as stack:
        base = (
            workdir
            if workdir is not None
            else Path(
                stack.enter_context(tempfile.TemporaryDirectory(prefix="reqfold-"))
            )
        )
        session = _Session(connect, started)
        try:
            base_url = stack.enter_context(running_server(fake))
        except BaseException:
            session.close()  # the caller's adapter, if any, is ours to close
            raise
        # A reply still held at a gate (a cancel landed mid-request) is let
        # go before the server stops, which would otherwise wait for it.
        stack.callback(fake.reset, cache=False, capture=False, script=True)
        stack.callback(session.close)
        try:
            identity = session.start()
        except AdapterError as error:
            tail = session.end(graceful=False)
            return ScenarioReport(
                implementation={}, startup_error=describe(error, tail, whole_tail=True)
            )
        report = ScenarioReport(implementation=identity)
        declared = declared_revisions(identity)
        if "harness" not in identity.get("capabilities", []):
            report.skipped.append("the implementation does not declare 'harness'")
            return report
        wanted = (
            declared
            if revisions is None
            else [r for r in declared if r in set(revisions)]
        )
        for scenario in chosen:
            left_out = [r.value for r in scenario.revisions if r not in wanted]
            if left_out and not any(r in wanted for r in scenario.revisions):
                report.skipped.append(
                    f"{scenario.id} not played: it is for {', '.join(left_out)},"
                    " which this run does not cover"
                )
        features = declared_features(identity)
        for scenario, revision in iter_runs(chosen, wanted):
            missing = missing_features(scenario, features)
            if missing:
                results = [
                    _not_covered(scenario, revision, not_declared_reason(missing))
                ]
            elif session.streak.reason is not None:
                results = [
                    _error_result(
                        scenario, revision, f"not played: {session.streak.reason}"
                    )
                ]
            else:
                results = _play(
                    session,
                    fake,
                    base_url,
                    base,
                    scenario,
                    revision,
                    on_evidence,
                    declared=features,
                )
            for result in results:
                report.results.append(result)
                if on_result is not None:
                    on_result(result)
        return report
    raise AssertionError("unreachable")  # pragma: no cover


class _Session:
    """The adapter connection, restarted (before the next scenario) after it breaks."""

    def __init__(
        self,
        connect: Callable[[], ClosableHarness],
        started: tuple[ClosableHarness, JsonObject] | None = None,
    ) -> None:
        self.connect = connect
        self.live: ClosableHarness | None = None
        self.identity: JsonObject = {}
        self.started = started
        """An adapter started and initialized by the caller, not yet used."""
        if started is not None:
            self.live = started[0]
        self.failed_restarts = 0
        """Restarts that failed in a row; at `MAX_RESTARTS` no more are tried."""
        self.restart_error = ""
        """Why the last restart failed, for the report."""
        self.streak = FailureStreak(None, unit="scenarios")
        """Scenarios in a row the adapter timed out on, or failed the same
        way on after a wait; at `MAX_IN_A_ROW` the rest are not played."""

    def start(self) -> JsonObject:
        if self.started is not None:  # the caller's, initialized already
            connection, identity = self.started
            self.started = None
            self.live = connection
        else:
            connection = self.connect()
            self.live = connection
            identity = connection.initialize()
        problem = check_result("initialize", identity)
        if problem is not None:
            raise AdapterProtocolError(f"the result of initialize {problem}")
        self.identity = identity
        return identity

    def ensure_live(self) -> None:
        """Start the adapter again if it was ended, up to `MAX_RESTARTS`
        failed tries in a row (then `live` stays None, with the reason).

        Called before each scenario, not when the adapter breaks: no adapter
        is started after the last scenario only to be shut down.
        """
        while self.live is None and self.failed_restarts < MAX_RESTARTS:
            try:
                self.start()
            except Exception as error:  # AdapterError, or what the connector raised
                self.restart_error = describe(
                    error, self.end(graceful=False), whole_tail=True
                )
                self.failed_restarts += 1
                continue
            self.failed_restarts = 0

    def end(self, *, graceful: bool = True) -> str:
        """Shut the connection down (or kill it); returns its stderr tail, if any.

        A connection that broke is killed (`graceful` False), not asked to
        shut down: it cannot be trusted to answer, and waiting for it costs
        a timeout. Once it is closed its reader threads are done, so the
        tail is whole.
        """
        live, self.live = self.live, None
        if live is None:
            return ""
        stop = live.close if graceful else live.kill
        with contextlib.suppress(Exception):  # best effort: never costs the report
            stop()
        tail = live.stderr_tail
        return tail if isinstance(tail, str) else ""

    def close(self) -> None:
        self.end(graceful=True)


def _run_result(
    scenario: Scenario, revision: Revision, outcome: Outcome, message: str
) -> Check:
    """The one result that stands for a whole scenario run, under its rules."""
    return scenario_check(
        scenario.id, revision.value, BROKEN_RUN, scenario.rules, outcome, message
    )


def _error_result(
    scenario: Scenario, revision: Revision, message: str, step: int | None = None
) -> Check:
    """A scenario run with no verdict: one ``run`` error under its rules, at
    the index of the step it broke at when that is known."""
    return scenario_check(
        scenario.id,
        revision.value,
        BROKEN_RUN,
        scenario.rules,
        Outcome.ERROR,
        message,
        facts=Facts(step=step),
    )


def _not_covered(scenario: Scenario, revision: Revision, reason: str) -> Check:
    """A scenario run that needs a feature the harness lacks: not covered.

    A skip, with the reason as data (`NOT_COVERED_REASON` in its detail)
    and in its message: no verdict on the scenario, and none against the
    harness (docs/adapter-protocol.md, "Optional features").
    """
    return scenario_check(
        scenario.id,
        revision.value,
        BROKEN_RUN,
        scenario.rules,
        Outcome.SKIP,
        NOT_COVERED + reason,
        detail={NOT_COVERED_REASON: reason},
    )


def _play(
    session: _Session,
    fake: FakeProvider,
    base_url: str,
    workdir: Path,
    scenario: Scenario,
    revision: Revision,
    on_evidence: Callable[[Evidence], None] | None = None,
    declared: frozenset[str] | None = None,
) -> list[Check]:
    def error(message: str, step: int | None = None) -> list[Check]:
        return [_error_result(scenario, revision, message, step)]

    session.ensure_live()
    if session.live is None:
        return error(
            f"the adapter could not be restarted ({MAX_RESTARTS} attempts);"
            f" the last: {session.restart_error}"
        )
    driver = ScenarioDriver(session.live, fake, base_url, workdir, declared)
    session.streak.timeout = getattr(session.live, "timeout", None)
    started = time.monotonic()
    try:
        evidence = driver.run(scenario, revision)
    except FeatureNotSupported as refused:  # healthy, lacks an undeclared one
        session.streak.succeeded()
        session.end(graceful=True)
        not_covered = _not_covered(scenario, revision, str(refused))
        return [not_covered, *_leaks(driver.evidence)]
    except ScenarioBroken as broken:  # the adapter is healthy: it said no
        session.streak.succeeded()
        tail = session.end(graceful=True)
        leaks = _leaks(driver.evidence)
        return (
            error(
                f"the scenario could not be played: {broken}{stderr_block(tail)}"
                + _notes(broken),
                driver.failed_step,
            )
            + leaks
        )
    except AdapterError as broken:
        session.streak.failed(broken, time.monotonic() - started)
        tail = session.end(graceful=False)
        leaks = _leaks(driver.evidence)
        said = describe(broken, tail, whole_tail=True) + _notes(broken)
        return error(said, driver.failed_step) + leaks
    except Exception as bug:  # a bug of ours: no verdict, and the run goes on
        tail = session.end(graceful=False)
        return error(
            f"the suite failed while playing the scenario: {describe(bug)}"
            f"{stderr_block(tail)}" + _notes(bug),
            driver.failed_step,
        )
    session.streak.succeeded()
    lost = fake.stats().capture.dropped_requests
    if lost:  # judged on part of the requests, a pass would prove nothing
        return error(
            f"the fake provider dropped {lost} of this run's captured requests"
            " to stay within its capture bounds (docs/fake-provider.md): the"
            " evidence is incomplete"
        )
    if on_evidence is not None:
        on_evidence(evidence)
    try:
        results = judge(evidence)
    except Exception as bug:  # a bug of ours: no verdict on this scenario
        return error(f"the suite could not judge the evidence: {describe(bug)}")
    if not results:
        return error("no check ran on this scenario's evidence")
    return results


def _leaks(evidence: Evidence | None) -> list[Check]:
    """Breaches already proven by what a run left before it broke: still
    failures (a sentinel found, a contributor called more often than the
    scenario allows).

    A harness that leaks a degraded composition, or composes again where it
    must not, and then hangs or crashes must not escape with "no verdict":
    the hang is the error beside the failure. Only failures are kept: a pass
    on part of the evidence proves nothing.
    """
    if evidence is None:
        return []
    try:
        results = judge_leaks(evidence)
    except Exception:  # a bug of ours must not hide the error itself
        return []
    return [result for result in results if result.outcome is Outcome.FAIL]


def judge(evidence: Evidence) -> list[Check]:
    """`reqfold.conformance.harness.checks.judge`, imported when a run is judged."""
    from reqfold.conformance.harness import checks

    return checks.judge(evidence)


def judge_leaks(evidence: Evidence) -> list[Check]:
    """`reqfold.conformance.harness.checks.judge_leaks`, imported when first needed."""
    from reqfold.conformance.harness import checks

    return checks.judge_leaks(evidence)


def _notes(error: BaseException) -> str:
    """The notes the driver added (where in the scenario), one per line."""
    notes = getattr(error, "__notes__", None) or []
    return "".join(f"\n{note}" for note in notes if isinstance(note, str))

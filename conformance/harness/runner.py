"""Running the scenarios against a harness adapter, with the fake provider served.

`run_scenarios` starts the fake provider on 127.0.0.1 (a real uvicorn
server: the harness under test is another process), starts the adapter,
plays every scenario that applies to a revision the adapter declares, and
judges each run (`conformance.harness.checks`). Like the vector runner it
keeps a broken adapter apart from a broken contract: a crash, a hang or a
protocol error costs the scenario an ``error`` result (no verdict), the
adapter is restarted, and the run goes on. Whatever happens, the adapter's
process group and the server are gone when it returns.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from conformance.codec.runner import Outcome
from conformance.errors import AdapterError
from conformance.harness.checks import CheckResult, judge, level_of
from conformance.harness.driver import HarnessConnection, ScenarioBroken, ScenarioDriver
from conformance.harness.scenarios import Scenario, iter_runs, load_scenarios
from fakes import FakeProvider
from fakes.server import running_server
from reference.json_values import JsonObject
from reference.revisions import Revision

MAX_RESTARTS = 3


class ClosableHarness(HarnessConnection, Protocol):
    """A harness connection the runner can initialize and close."""

    def initialize(self) -> JsonObject:
        """Send ``initialize``; returns its result."""
        ...

    def close(self) -> None:
        """Shut the adapter down and release it."""
        ...


@dataclass(slots=True, kw_only=True)
class ScenarioReport:
    """Every check result of a scenario run, with the implementation's identity."""

    implementation: JsonObject
    results: list[CheckResult] = field(default_factory=list)
    startup_error: str | None = None
    skipped: list[str] = field(default_factory=list)
    """Scenario runs left out, each with the reason."""


def run_scenarios(
    connect: Callable[[], ClosableHarness],
    *,
    revisions: Iterable[Revision] | None = None,
    scenarios: list[Scenario] | None = None,
    on_result: Callable[[CheckResult], None] | None = None,
    workdir: Path | None = None,
) -> ScenarioReport:
    """Play `scenarios` (default: all) against the adapter `connect` starts."""
    chosen = load_scenarios() if scenarios is None else scenarios
    fake = FakeProvider("deepseek")
    with contextlib.ExitStack() as stack:
        base = (
            workdir
            if workdir is not None
            else Path(
                stack.enter_context(tempfile.TemporaryDirectory(prefix="reqfold-"))
            )
        )
        base_url = stack.enter_context(running_server(fake))
        session = _Session(connect)
        stack.callback(session.close)
        try:
            identity = session.start()
        except AdapterError as error:
            return ScenarioReport(implementation={}, startup_error=describe(error))
        report = ScenarioReport(implementation=identity)
        declared = [
            Revision(name)
            for name in identity.get("revisions", [])
            if name in {r.value for r in Revision}
        ]
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
                    f"{scenario.id}: for {', '.join(left_out)}, not run"
                )
        for scenario, revision in iter_runs(chosen, wanted):
            results = _play(session, fake, base_url, base, scenario, revision)
            for result in results:
                report.results.append(result)
                if on_result is not None:
                    on_result(result)
        return report
    raise AssertionError("unreachable")  # pragma: no cover


class _Session:
    """The adapter connection, restarted after it breaks."""

    def __init__(self, connect: Callable[[], ClosableHarness]) -> None:
        self.connect = connect
        self.live: ClosableHarness | None = None
        self.identity: JsonObject = {}
        self.failed_restarts = 0

    def start(self) -> JsonObject:
        connection = self.connect()
        self.live = connection
        self.identity = connection.initialize()
        return self.identity

    def restart(self) -> None:
        self.close()
        while self.failed_restarts < MAX_RESTARTS:
            try:
                self.start()
            except AdapterError:
                self.close()
                self.failed_restarts += 1
                continue
            return

    def close(self) -> None:
        if self.live is not None:
            with contextlib.suppress(Exception):
                self.live.close()
            self.live = None


def _play(
    session: _Session,
    fake: FakeProvider,
    base_url: str,
    workdir: Path,
    scenario: Scenario,
    revision: Revision,
) -> list[CheckResult]:
    def error(message: str) -> list[CheckResult]:
        return [
            CheckResult(
                check_id=f"{scenario.id}@{revision.value}/run",
                scenario=scenario.id,
                revision=revision.value,
                rules=scenario.rules,
                level=level_of(scenario.rules),
                outcome=Outcome.ERROR,
                message=message,
            )
        ]

    if session.live is None:
        return error("the adapter could not be restarted")
    driver = ScenarioDriver(session.live, fake, base_url, workdir)
    try:
        evidence = driver.run(scenario, revision)
    except ScenarioBroken as broken:
        session.restart()
        return error(f"the scenario could not be played: {broken}")
    except AdapterError as broken:
        session.restart()
        return error(describe(broken))
    results = judge(evidence)
    if not results:
        return [
            CheckResult(
                check_id=f"{scenario.id}@{revision.value}/run",
                scenario=scenario.id,
                revision=revision.value,
                rules=scenario.rules,
                level=level_of(scenario.rules),
                outcome=Outcome.FAIL,
                message="no check ran on this scenario's evidence",
            )
        ]
    return results


def describe(error: Exception) -> str:
    """An adapter failure in one line, with the tail of its stderr."""
    name = type(error).__name__
    if not isinstance(error, AdapterError):
        return f"{name}: {error}"
    tail = error.stderr_tail.strip().splitlines()[-3:]
    stderr = f" [stderr: {' | '.join(tail)}]" if tail else ""
    return f"{name}: {error.detail}{stderr}"

"""The three parts of ``reqfold run``: vectors, properties, scenarios.

Each runs its part of the suite against the implementation and records
every result in the `RunRecord` as it comes (shown at once when it is a
problem), with what a report needs to reproduce a failure.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reqfold.conformance.adapters.connection import Connection
from reqfold.conformance.adapters.lifecycle import declared_revisions
from reqfold.conformance.codec.cases import STRICT
from reqfold.conformance.codec.runner import (
    is_not_run,
    judged_profiles,
    profile_of,
    run_vectors,
)
from reqfold.conformance.harness.evidence import Evidence
from reqfold.conformance.harness.runner import ClosableHarness, run_scenarios
from reqfold.conformance.harness.scenarios import Scenario, iter_runs
from reqfold.conformance.report.model import Reproduction
from reqfold.conformance.report.reproduction import (
    property_reproduction,
    scenario_reproduction,
    vector_reproduction,
)
from reqfold.conformance.run.record import PROBLEM_OUTCOMES, RunRecord
from reqfold.conformance.verdict import Check
from reqfold.conformance.written_files import fresh_folder
from reqfold.reference.json_values import JsonObject
from reqfold.reference.revisions import Revision

if TYPE_CHECKING:
    from reqfold.conformance.snapshots.recorder import SnapshotRecorder


def quiet(check: Check) -> None:
    """Show nothing (a case the run never sent)."""


def run_vector_part(
    outcome: RunRecord,
    connect: Callable[[], Connection],
    revisions: list[Revision] | None,
    show: Callable[[Check], None],
    profile: str | None = None,
) -> None:
    """Every codec vector: the judged profiles as checks, the others in a note."""
    from reqfold.conformance.codec.loading import iter_cases

    outcome.parts.append("vectors")
    selected = list(iter_cases(revisions=revisions))
    cases = {(revision.value, case.id): case for revision, case in selected}
    outcome.progress.start("vectors", len(selected))
    # What the verdict covers is known from the claim `initialize` made when
    # the run began (docs/vectors.md, "Profiles"): results of the other
    # profiles are summed up in one line, never held back, so an interrupt
    # loses nothing.
    judged = judged_profiles(outcome.identity, profile)

    def add(result: Check) -> None:
        if profile_of(result) not in judged:
            outcome.unjudged.add(result.id)
            outcome.progress.advance()
            return
        case = cases.get((result.revision, result.name))

        def reproduce() -> Reproduction | None:
            if case is None:
                return None
            params = case.request_params(Revision(result.revision))
            found = outcome.recorder.answer(case.method, params)
            return vector_reproduction(
                case, result.revision, found, outcome.impl, profile=profile
            )

        check = outcome.record(
            result,
            quiet if is_not_run(result) else show,  # counted, not listed
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


def run_property_part(
    outcome: RunRecord,
    connect: Callable[[], Connection],
    revisions: list[Revision] | None,
    examples: int | None,
    show: Callable[[Check], None],
    profile: str | None = None,
) -> None:
    """The differential properties: generated inputs, compared with the
    reference; the inputs of the profiles the verdict covers."""
    from hypothesis.configuration import set_hypothesis_home_dir

    from reqfold.conformance.codec import properties
    from reqfold.conformance.codec.property_table import PROPERTIES

    outcome.parts.append("properties")
    declared = declared_revisions(outcome.identity)
    chosen = declared if revisions is None else [r for r in declared if r in revisions]
    options: dict[str, Any] = {} if examples is None else {"examples": examples}
    total = sum(1 for p in PROPERTIES for r in chosen if r in p.revisions)
    outcome.progress.start("properties", total)

    def add(result: Check) -> None:
        message = result.message
        vector = properties.counterexample(result)
        if vector is not None:
            message += "\ncounterexample, as a vector ready to commit:\n"
            message += properties.render_vector(result)

        def reproduce() -> Reproduction | None:
            if vector is None:
                return None
            method = properties.method_of(result)
            params = {**vector["params"], "revision": result.revision}
            found = outcome.recorder.answer(method, params)
            return property_reproduction(
                vector, method, result.revision, found, outcome.impl
            )

        check = outcome.record(
            replace(result, message=message), show, reproduce=reproduce
        )
        outcome.progress.advance(problem=check.outcome in PROBLEM_OUTCOMES)

    # Hypothesis keeps files under its home folder (./.hypothesis by
    # default): a run must not leave one in the user's repository.
    with tempfile.TemporaryDirectory(prefix="reqfold-hypothesis-") as home:
        set_hypothesis_home_dir(home)
        try:
            properties.run_properties(
                connect, chosen, on_result=add, profile=profile, **options
            )
        finally:
            set_hypothesis_home_dir(None)


def run_scenario_part(
    outcome: RunRecord,
    connect: Callable[[], ClosableHarness],
    revisions: list[Revision] | None,
    scenarios: list[Scenario],
    keep: Path | None,
    show: Callable[[Check], None],
    recorder: SnapshotRecorder | None = None,
    started: tuple[ClosableHarness, JsonObject] | None = None,
) -> None:
    """Every scenario the implementation's revisions apply to, played and judged.

    `started`: the adapter already started and initialized, played first
    (`run_scenarios`).
    """
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

    def add(check: Check) -> None:
        run_key = check.run or ""
        if run_key not in played:
            played.add(run_key)
            outcome.progress.advance()

        def reproduce() -> Reproduction | None:
            scenario = by_id.get(check.scenario or "")
            if scenario is None:
                return None
            return scenario_reproduction(check, scenario, outcome.impl)

        recorded = outcome.record(check, show, reproduce=reproduce)
        if recorded.outcome in PROBLEM_OUTCOMES:
            outcome.progress.problems += 1

    if keep is not None:
        # never over what is there already: a non-empty folder gets a
        # fresh sub-folder, and the run says which
        try:
            keep = fresh_folder(keep)
            outcome.notes.append(f"--keep: the logs and requests are kept in {keep}")
        except OSError as error:
            outcome.notes.append(
                f"--keep {keep}: nothing kept, no fresh folder could be made there:"
                f" {error.strerror or error}"
            )
            keep = None
    report = run_scenarios(
        connect,
        revisions=revisions,
        scenarios=scenarios,
        on_result=add,
        workdir=keep,
        on_evidence=seen,
        started=started,
    )
    if report.startup_error is not None:
        outcome.startup_error = report.startup_error
    outcome.notes.extend(report.skipped)

"""Golden tests: the reference's own behaviour, kept as regression snapshots.

The same snapshots ``reqfold run --snapshot-dir`` keeps (the normalized log
and requests, `reqfold.conformance.snapshots`), stored by syrupy's pytest fixture
with the same extension under ``__snapshots__/test_snapshots_golden/``:

* the session ``reqfold demo`` writes, and the requests the fake received;
* per scenario, the evidence the reference leaves, under the latest
  revision the scenario is for.

A change of the reference's behaviour fails here even when every
conformance check still passes; when the change is meant, accept it with
``python3 -m pytest tests/conformance/test_snapshots_golden.py
--snapshot-update`` and commit the changed ``.ambr`` files with it.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from syrupy.assertion import SnapshotAssertion

from reqfold.conformance import demo
from reqfold.conformance.adapters.inprocess import InProcessHarness
from reqfold.conformance.harness.evidence import Evidence
from reqfold.conformance.harness.runner import run_scenarios
from reqfold.conformance.harness.scenarios import load_scenarios
from reqfold.conformance.outcomes import Outcome
from reqfold.conformance.snapshots.evidence import evidence_snapshot, snapshot_name
from reqfold.conformance.snapshots.extension import SessionSnapshotExtension
from reqfold.conformance.snapshots.normalize import session_snapshot
from reqfold.reference.json_values import JsonObject
from reqfold.reference.revisions import ALL_REVISIONS

SCENARIOS = load_scenarios()
LATEST = {
    scenario.id: max(scenario.revisions, key=ALL_REVISIONS.index)
    for scenario in SCENARIOS
}
"""The revision each scenario's golden snapshot is taken under."""


@pytest.fixture
def golden(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    return snapshot.use_extension(SessionSnapshotExtension)


def test_the_demo_session_matches_its_snapshot(
    golden: SnapshotAssertion, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log, requests = tmp_path / "demo.jsonl", tmp_path / "demo.requests.jsonl"
    status = demo.run(argparse.Namespace(log=log, requests=requests))
    assert status == 0, capsys.readouterr().out
    captured = [
        json.loads(line) for line in requests.read_text(encoding="utf-8").splitlines()
    ]
    data = session_snapshot(log=log.read_bytes(), requests=captured)
    assert len(data["requests"]) == len(captured) > 0
    assert data == golden


@pytest.fixture(scope="module")
def reference_evidence(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, JsonObject]:
    """Every scenario played once by the reference in process, as snapshot data."""
    kept: dict[str, JsonObject] = {}

    def keep(evidence: Evidence) -> None:
        kept[snapshot_name(evidence)] = evidence_snapshot(evidence)

    problems: list[str] = []
    for revision in sorted(set(LATEST.values()), key=ALL_REVISIONS.index):
        report = run_scenarios(
            lambda: InProcessHarness(timeout=10),
            revisions=[revision],
            scenarios=[s for s in SCENARIOS if LATEST[s.id] is revision],
            workdir=tmp_path_factory.mktemp("golden"),
            on_evidence=keep,
        )
        problems += [r.id for r in report.results if r.outcome != Outcome.PASS]
    assert problems == []
    return kept


@pytest.mark.slow
@pytest.mark.parametrize("scenario", [scenario.id for scenario in SCENARIOS])
def test_the_reference_leaves_the_evidence_of_its_snapshot(
    golden: SnapshotAssertion, reference_evidence: dict[str, JsonObject], scenario: str
) -> None:
    name = f"{scenario}@{LATEST[scenario].value}"
    assert name in reference_evidence, f"{name} did not play to the end"
    assert reference_evidence[name] == golden

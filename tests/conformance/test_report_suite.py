"""The report's ``suite`` member: how many vector and scenario files ran,
and a digest over every file the suite reads."""

from __future__ import annotations

from reqfold.conformance.codec.cases import VECTORS_DIR
from reqfold.conformance.codec.loading import load_cases
from reqfold.conformance.harness.scenarios import SCENARIOS_DIR, load_scenarios
from reqfold.conformance.report import suite


def test_the_scenario_count_is_of_scenarios_not_of_the_schema_or_the_seeds() -> None:
    assert (SCENARIOS_DIR / "scenario.schema.json").is_file()
    assert any((SCENARIOS_DIR / "seeds").iterdir())
    assert suite.suite_identity()["scenarioFiles"] == len(load_scenarios())


def test_the_vector_count_is_of_vector_files_not_of_the_schema() -> None:
    files = {case.path for case in load_cases()}
    assert (VECTORS_DIR / "vectors.schema.json").is_file()
    assert suite.suite_identity()["vectorFiles"] == len(files)


def test_the_digest_covers_the_schemas_and_the_seed_logs_too() -> None:
    names = {
        name
        for root in (VECTORS_DIR, SCENARIOS_DIR)
        for name, _ in suite._digested_files(root)
    }
    assert "scenarios/scenario.schema.json" in names
    assert "vectors/vectors.schema.json" in names
    assert any(name.startswith("scenarios/seeds/") for name in names)

"""Shared test configuration: hypothesis profiles and spec-mark validation.

Every ``@pytest.mark.spec("RULE-ID", ...)`` must name rules that exist in
docs/spec.md; a misspelt ID is a usage error at collection, not a silent
gap in coverage. The IDs are also copied into ``user_properties`` so they
appear in JUnit XML.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

from conformance.rules import load_rules

settings.register_profile("dev", max_examples=100)
settings.register_profile(
    "ci",
    max_examples=200,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("thorough", max_examples=2000, deadline=None)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev")
)


def pytest_collection_modifyitems(
    config: pytest.Config, items: list[pytest.Item]
) -> None:
    rules = load_rules()
    unknown: list[str] = []
    for item in items:
        for mark in item.iter_markers("spec"):
            for rule_id in mark.args:
                if rule_id not in rules:
                    unknown.append(f"{item.nodeid}: {rule_id}")
                item.user_properties.append(("spec", rule_id))
    if unknown:
        raise pytest.UsageError(
            "spec marks name rules missing from docs/spec.md:\n  "
            + "\n  ".join(unknown)
        )

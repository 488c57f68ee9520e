"""The @given tests' example counts follow the Hypothesis profile."""

from __future__ import annotations

import re
from pathlib import Path

from example_counts import scaled_examples
from hypothesis import settings

TESTS = Path(__file__).resolve().parents[1]


def test_a_stated_count_holds_under_dev_and_scales_with_ci_and_thorough() -> None:
    assert scaled_examples(300, settings.get_profile("dev")) == 300
    assert scaled_examples(300, settings.get_profile("ci")) == 600
    assert scaled_examples(300, settings.get_profile("thorough")) == 6000
    assert scaled_examples(25, settings.get_profile("ci")) == 50


def test_the_loaded_profile_scales_a_count_as_it_scales_its_own_default() -> None:
    loaded = settings().max_examples
    assert scaled_examples(100) == loaded


def test_no_test_sets_a_fixed_example_count() -> None:
    fixed = [
        f"{path.relative_to(TESTS)}:{number}"
        for path in sorted(TESTS.rglob("*.py"))
        if path.name != "conftest.py"
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if re.search(r"max_examples\s*=\s*\d", line)
    ]
    assert fixed == [], "use max_examples=scaled_examples(N): " + ", ".join(fixed)

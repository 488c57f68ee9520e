"""Validating what an implementation sent costs a moment, whatever it sent.

`schema_check` (a linear ``uniqueItems``, the first error and a bounded
count, a bound on the values validated) is shown on its own, then through
real runs: known-bad adapters (`bad_adapters/answers_initialize_hugely.py`,
child processes) whose ``initialize`` answers once took minutes or
gigabytes, and ``reqfold compare`` on a report with a million bad checks.
"""

from __future__ import annotations

import json
import shlex
import sys
import time
from pathlib import Path

import pytest
from cli_in_process import reqfold_here

from reqfold.conformance import schema_check
from reqfold.conformance.schema_check import (
    MAX_NODES,
    Validator,
    first_problem,
    too_large,
)

ROOT = Path(__file__).resolve().parents[2]
HUGE = ROOT / "tests/conformance/bad_adapters/answers_initialize_hugely.py"
CHEAPLY = 20.0
"""CPU seconds this process may spend on a refusal (it took 133 s, or
gigabytes, before). CPU time, not the clock: a machine loaded by other
work stretches the clock, not the work the refusal does."""

UNIQUE = Validator({"uniqueItems": True})


@pytest.mark.parametrize(
    ("items", "unique"),
    [
        ([1, 1.0], False),
        ([True, 1], True),
        ([False, 0, None, "", [], {}], True),
        ([{"a": 1, "b": [2]}, {"b": [2.0], "a": 1}], False),
        ([[1, 2], [2, 1]], True),
        ([{"a": True}, {"a": 1}], True),
        (["x", "x"], False),
    ],
)
def test_unique_items_follow_json_schemas_equality(items: list, unique: bool) -> None:
    assert (not list(UNIQUE.iter_errors(items))) is unique


def test_unique_items_of_many_objects_are_checked_in_linear_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each JSON value is looked at once (jsonschema's own check compares
    every pair: 8,000 objects took 133 s)."""
    items = [{"n": n, "more": [n, {"deep": n}]} for n in range(100_000)]
    looked_at = 0
    identity = schema_check._identity

    def counting(value: object) -> object:
        nonlocal looked_at
        looked_at += 1
        return identity(value)

    monkeypatch.setattr(schema_check, "_identity", counting)
    assert not list(UNIQUE.iter_errors(items))
    assert looked_at == 6 * len(items)  # an object, an int, a list, an int, ...


def test_the_first_error_is_reported_with_a_bounded_count_of_the_rest() -> None:
    validator = Validator({"items": {"type": "string"}})
    assert first_problem(validator, ["a"]) is None
    error, more = first_problem(validator, ["a", 1, 2]) or (None, "")
    assert (list(error.path) if error else None, more) == ([1], " (and 1 more)")
    assert first_problem(validator, [1] * 1_000_000)[1] == " (and 100+ more)"  # type: ignore[index]


def test_a_value_of_more_values_than_the_bound_is_too_large() -> None:
    assert not too_large([0] * (MAX_NODES - 1))
    assert too_large([0] * MAX_NODES)
    assert too_large({"a": [[0] * 1000 for _ in range(MAX_NODES // 1000)]})


@pytest.mark.slow
@pytest.mark.parametrize(
    ("mode", "said"),
    [
        (
            "objects",
            "at ['revisions'][0]: {'n': 0} is not one of ['header-events',",
        ),
        ("bad-items", f"it holds more than {MAX_NODES} JSON values"),
    ],
)
def test_a_costly_initialize_answer_is_refused_at_once(mode: str, said: str) -> None:
    impl = shlex.join([sys.executable, str(HUGE), mode])
    started = time.process_time()  # the run is in this process, the adapter not
    status, _out, err = reqfold_here("run", "--impl", impl, "--timeout", "5")
    assert time.process_time() - started < CHEAPLY
    assert status == 3
    assert "did not start" in err
    assert "within 5s" not in err  # refused for its content, not for its time
    assert said in err


@pytest.mark.slow
def test_compare_says_the_first_of_a_million_bad_checks_at_once(tmp_path: Path) -> None:
    report = {"format": "reqfold-run/1", "checks": [1] * 1_000_000}
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps(report), encoding="utf-8")
    new.write_text(json.dumps(report), encoding="utf-8")
    started = time.process_time()
    status, _out, err = reqfold_here("compare", str(old), str(new))
    assert time.process_time() - started < CHEAPLY
    assert status == 2
    assert err.startswith(f"reqfold compare: {old} breaks run-report.schema.json at")
    assert err.rstrip().endswith("(and 100+ more)")

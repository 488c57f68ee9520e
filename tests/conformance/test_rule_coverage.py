"""Every rule of docs/spec.md is demonstrated somewhere, and every name is real.

A rule counts as covered when a test carries it in a ``spec`` mark, a test
vector lists it, or a checker fixture is named after it. Scenarios name
rules too (their own and their expectations'): those names must exist, and
the scenarios' rules are kept apart so the docs can say which rules a run
of a harness shows. Rules no one
demonstrates are listed by ID, so the gap is visible rather than silent.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

from reqfold.conformance.check import APPLIED_RULES
from reqfold.conformance.harness.scenarios import load_scenarios
from reqfold.conformance.rules import load_rules

ROOT = Path(__file__).resolve().parents[2]


def spec_marks_in_tests() -> set[str]:
    found: set[str] = set()
    for path in (ROOT / "tests").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "spec"
            ):
                found.update(
                    arg.value
                    for arg in node.args
                    if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
                )
    return found


def rules_in_vectors() -> set[str]:
    found: set[str] = set()
    for path in (ROOT / "conformance" / "vectors").rglob("*.json"):
        document = json.loads(path.read_text(encoding="utf-8"))
        for case in document.get("cases", []) if isinstance(document, dict) else []:
            found.update(case.get("rules", []))
    return found


def rules_in_checker_fixtures() -> set[str]:
    folder = ROOT / "tests" / "conformance" / "check_fixtures"
    rules = load_rules()
    found: set[str] = set()
    for path in folder.glob("*.jsonl") if folder.exists() else []:
        found.update(
            rule
            for rule in rules
            if path.stem == rule or path.stem.startswith(rule + "-")
        )
    return found


def rules_in_scenarios() -> set[str]:
    found: set[str] = set()
    for scenario in load_scenarios():
        found |= scenario.rules_named()
    return found


def test_every_rule_named_anywhere_exists_in_the_spec() -> None:
    rules = load_rules()
    named = spec_marks_in_tests() | rules_in_vectors() | rules_in_scenarios()
    assert sorted(named - set(rules)) == []


def test_every_session_prefix_rule_is_checked_on_a_run() -> None:
    """PREFIX-* need a run, not a log: a check must cite each one.

    A rule counts when a scenario expectation cites it or the log checker
    applies it on every run; a scenario merely listing a rule does not.
    """
    cited: set[str] = set(APPLIED_RULES)
    for scenario in load_scenarios():
        cited |= scenario.rules_checked()
    prefix_rules = {rule for rule in load_rules() if rule.startswith("PREFIX-")}
    assert sorted(prefix_rules - cited) == []


def test_every_rule_of_the_spec_is_demonstrated() -> None:
    rules = load_rules()
    covered = spec_marks_in_tests() | rules_in_vectors() | rules_in_checker_fixtures()
    assert sorted(set(rules) - covered) == []

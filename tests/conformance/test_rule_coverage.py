"""Every rule of docs/spec.md is demonstrated somewhere, and every name is real.

A rule counts as covered when a test carries it in a ``spec`` mark (or a
``spec=`` field a parametrized test turns into one), a test vector lists
it, a checker fixture is named after it, or the known-bad harnesses' table
of catches (``bad_harnesses/catches.toml``) names it. Scenarios name rules too
(their own and their expectations'): those names must exist, and the
scenarios' rules are kept apart so the docs can say which rules a run of a
harness shows. The code and the docs cite rules in prose: every string
shaped like a rule ID there must be one, but for the few tokens of that
shape that are not rules (`NOT_RULES`). Rules no one demonstrates are
listed by ID, so the gap is visible rather than silent.
"""

from __future__ import annotations

import ast
import json
import re
import tomllib
from pathlib import Path

from reqfold.conformance.check import APPLIED_RULES
from reqfold.conformance.harness.scenarios import load_scenarios
from reqfold.conformance.rules import load_rules

ROOT = Path(__file__).resolve().parents[2]

RULE_SHAPED = re.compile(r"\b[A-Z]{2,8}-\d+\b")
"""What a rule ID looks like (``HDR-4``, ``PREFIX-12``) in prose."""

NOT_RULES = {
    "UTF-8": "an encoding",
    "UTF-16": "an encoding (surrogates)",
    "CRC-32": "a checksum (the fake's tokenizer)",
    "GPT-5": "a model family (docs/fake-provider.md)",
    "EXAMPLE-1": "the format of a rule, shown in docs/spec.md, which says so",
}
"""Tokens shaped like a rule ID that are not one, each with what it is."""

CITING_FOLDERS = ("conformance", "fakes", "reference", "docs")
"""Where code and docs cite rules in prose."""

DATA_FOLDERS = (ROOT / "conformance" / "scenarios", ROOT / "conformance" / "vectors")
"""Scenarios and vectors: their rule fields are read as data (below); their
texts are a harness's input, where ``BEFORE-1`` is a sentinel, not a rule."""


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
            if isinstance(node, ast.keyword) and node.arg == "spec":
                # a field that becomes a mark: `pytest.mark.spec(*case.spec)`
                listed = node.value
                if isinstance(listed, (ast.Tuple, ast.List)):
                    found.update(
                        item.value
                        for item in listed.elts
                        if isinstance(item, ast.Constant)
                        and isinstance(item.value, str)
                    )
    return found


def rule_shaped_in_code_and_docs() -> dict[str, list[str]]:
    """Every rule-shaped token in the code and the docs, with where it is."""
    found: dict[str, list[str]] = {}
    for folder in CITING_FOLDERS:
        for path in sorted((ROOT / folder).rglob("*")):
            if not path.is_file() or any(
                path.is_relative_to(data) for data in DATA_FOLDERS
            ):
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue  # a binary file cites nothing
            for token in set(RULE_SHAPED.findall(text)):
                found.setdefault(token, []).append(str(path.relative_to(ROOT)))
    return found


def rules_in_vectors() -> set[str]:
    found: set[str] = set()
    for path in (ROOT / "conformance" / "vectors").rglob("*.json"):
        document = json.loads(path.read_text(encoding="utf-8"))
        for case in document.get("cases", []) if isinstance(document, dict) else []:
            found.update(case.get("rules", []))
    return found


def rules_in_gallery_catches() -> set[str]:
    """The rules of ``bad_harnesses/catches.toml``, which become the gallery
    test's spec marks."""
    path = ROOT / "tests" / "conformance" / "bad_harnesses" / "catches.toml"
    found: set[str] = set()
    for row in tomllib.loads(path.read_text(encoding="utf-8"))["catch"]:
        found.update(rule for _, rule in row["fails"])
        found.update(row.get("also", []))
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


def test_every_rule_the_code_and_the_docs_cite_exists_in_the_spec() -> None:
    rules = set(load_rules())
    cited = rule_shaped_in_code_and_docs()
    unknown = {
        token: places
        for token, places in sorted(cited.items())
        if token not in rules and token not in NOT_RULES
    }
    assert unknown == {}


def test_every_token_allowed_as_not_a_rule_is_still_used_and_is_not_a_rule() -> None:
    cited = rule_shaped_in_code_and_docs()
    assert sorted(set(NOT_RULES) - set(cited)) == []
    assert sorted(set(NOT_RULES) & set(load_rules())) == []


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
    covered = (
        spec_marks_in_tests()
        | rules_in_vectors()
        | rules_in_checker_fixtures()
        | rules_in_gallery_catches()
    )
    assert sorted(set(rules) - covered) == []

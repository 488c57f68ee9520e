"""One verdict from every part of a run: the per-rule table and the exit status.

`reqfold run` judges an implementation with up to three parts (the codec
vectors, the differential properties, the harness scenarios); each result
names the rules it shows. This module turns them all into `Check` rows,
tallies them per rule (`rule_table`) and decides the single verdict:

* ``1`` (NOT conformant): a MUST check failed (or, with ``strict``, a
  SHOULD check warned);
* ``3`` (no verdict): otherwise, when a check errored, the implementation
  did not start, or no check ran at all;
* ``0`` (conformant): every check that ran passed (SHOULD warnings are
  listed, not failed).

Pure: rows in, table and status out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from conformance.outcomes import Outcome
from conformance.rules import load_rules

CONFORMANT, BROKEN, NO_VERDICT = 0, 1, 3


@dataclass(frozen=True, slots=True, kw_only=True)
class Check:
    """One result of any part, in the shape the verdict needs."""

    part: str
    """``vectors``, ``properties`` or ``scenarios``."""
    id: str
    revision: str
    rules: tuple[str, ...]
    outcome: Outcome
    message: str = ""


@dataclass(slots=True, kw_only=True)
class RuleRow:
    """The tally of one rule over every check that names it."""

    rule: str
    level: str
    counts: Counter[Outcome] = field(default_factory=Counter)
    first_problem: str = ""
    """The id of the first check that failed, warned or errored on the rule."""


def rule_table(checks: Iterable[Check]) -> list[RuleRow]:
    """One row per rule any check names, in docs/spec.md order."""
    registry = load_rules()
    order = {rule: position for position, rule in enumerate(registry)}
    rows: dict[str, RuleRow] = {}
    for check in checks:
        if check.outcome is Outcome.SKIP:
            continue
        for rule in check.rules:
            row = rows.get(rule)
            if row is None:
                row = rows[rule] = RuleRow(rule=rule, level=registry[rule].level)
            row.counts[check.outcome] += 1
            if check.outcome is not Outcome.PASS and not row.first_problem:
                row.first_problem = check.id
    return sorted(rows.values(), key=lambda row: order.get(row.rule, len(order)))


def exit_status(
    checks: Sequence[Check], *, strict: bool = False, startup_error: bool = False
) -> int:
    """The run's single verdict as an exit status (module docstring)."""
    tally = Counter(check.outcome for check in checks)
    if tally[Outcome.FAIL] or (strict and tally[Outcome.WARN]):
        return BROKEN
    ran = tally[Outcome.PASS] + tally[Outcome.WARN]
    if startup_error or tally[Outcome.ERROR] or ran == 0:
        return NO_VERDICT
    return CONFORMANT


def render_table(rows: Sequence[RuleRow]) -> list[str]:
    """The per-rule table as text lines."""
    lines = [
        f"  {'rule':<10} {'level':<10} {'pass':>5} {'warn':>5} {'fail':>5}"
        f" {'error':>5}  first problem"
    ]
    for row in rows:
        c = row.counts
        lines.append(
            f"  {row.rule:<10} {row.level:<10} {c[Outcome.PASS]:>5}"
            f" {c[Outcome.WARN]:>5} {c[Outcome.FAIL]:>5} {c[Outcome.ERROR]:>5}"
            f"  {row.first_problem}".rstrip()
        )
    return lines

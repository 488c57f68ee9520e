"""One verdict from every part of a run: the per-rule table and the exit status.

It sits below every tool (`run`, `probe`, `report`, `cache`, the pytest
plugin): each judges with these words and statuses, none imports another's.

`reqfold run` judges an implementation with up to three parts (the codec
vectors, the differential properties, the harness scenarios); every part
(and ``reqfold probe``, the cache judgement and the pytest plugin) makes
its results as `Check`, the one result model, which names the rules it
shows (the words: docs/glossary.md). This module tallies checks per rule
(`rule_table`) and decides the single verdict:

* ``1`` (NOT CONFORMANT): a MUST check failed (or, with ``strict``, a
  SHOULD check warned); also (STALE EXPECTED FAILURE) when nothing failed
  but an expected failure passed;
* ``3`` (no verdict): otherwise, when a check errored, the implementation
  did not start, or no check ran at all;
* ``0`` (conformant): every check that ran passed (SHOULD warnings are
  listed, not failed).

A scenario run that needs an optional feature the harness lacks is *not
covered* (a skip: docs/adapter-protocol.md, "Optional features"): it
changes no status, and the verdict says how many scenario runs it covers
and which were not covered, with the reason (`coverage_text`).

Expected failures (``--expected-failures``, check id -> reason) change a
check's status (`status_of`): one that fails or warns is ``xfail`` and
breaks nothing; one that passes is ``xpass``, a stale entry, and fails
the run like a broken rule, so the list cannot quietly outlive the bug.

Pure: rows in, table and status out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from reqfold.conformance.outcomes import NOT_COVERED_REASON, Outcome
from reqfold.conformance.rules import load_rules
from reqfold.reference.json_values import JsonObject, JsonValue

CONFORMANT, BROKEN, NO_VERDICT = 0, 1, 3

_T = TypeVar("_T")


@dataclass(frozen=True, slots=True, kw_only=True)
class Check:
    """One check's result: the only result any part of the suite produces.

    Made where the check is made (the codec runner, the properties, the
    scenario judge, the probe), carried as data to the verdict and the
    reports, which only format it: nothing reads a fact back out of `id`
    or `message` (docs/glossary.md).
    """

    part: str
    """``vectors``, ``properties``, ``scenarios``, ``probe`` or ``cache``
    (docs/glossary.md)."""
    id: str
    """The check's stable public id (``scenario@revision/name`` for a
    scenario check, ``revision/case`` for a vector, ...)."""
    revision: str
    rules: tuple[str, ...]
    outcome: Outcome
    message: str = ""
    """What the check found, in words to show (a skip's is its reason, shown
    as such); never read back for a fact."""
    level: str = ""
    """``MUST`` or ``SHOULD``: the level the check fails at."""
    duration: float = 0.0
    """Seconds from the previous result to this one (reports only)."""
    scenario: str | None = None
    """The scenario a scenario check judged (None for the codec parts)."""
    name: str = ""
    """What was checked within the scenario run: the id after
    ``scenario@revision/`` (``send-1/end``, ``log/HDR-4``, ``calls/x@a``)."""
    step: int | None = None
    """The index among the scenario's steps of the step the check is about
    (None when it judged the whole run)."""
    expected: JsonValue = None
    """What the spec wanted, as JSON (None when the check does not say)."""
    found: JsonValue = None
    """What the implementation did, like `expected`."""
    first_difference: str | None = None
    """Where `found` first differs from `expected`: a JSON path, or the
    request field where the cache broke (None when not known)."""
    detail: JsonObject = field(default_factory=dict)
    """Part-specific extras (an expectation's kind, the error code, ...)."""

    @property
    def run(self) -> str | None:
        """``scenario@revision``: the scenario run a scenario check belongs to."""
        return None if self.scenario is None else f"{self.scenario}@{self.revision}"

    def dump(self) -> JsonObject:
        """The JSON form of the result (a scenario check's members first):
        `load` makes the same check of it."""
        return {
            "id": self.id,
            "scenario": self.scenario,
            "revision": self.revision,
            "rules": list(self.rules),
            "level": self.level,
            "outcome": self.outcome.value,
            "message": self.message,
            "part": self.part,
            "name": self.name,
            "step": self.step,
            "expected": self.expected,
            "found": self.found,
            "firstDifference": self.first_difference,
            "detail": dict(self.detail),
            "duration": self.duration,
        }

    @classmethod
    def load(cls, data: JsonValue) -> Check:
        """The check `dump` wrote; `ValueError`, naming the member, for any
        member missing or of the wrong type (a plan handed between
        processes is read, not trusted)."""
        if not isinstance(data, dict):
            raise ValueError(f"a check is a JSON object, not {_json_type(data)}")
        rules = _member(data, "rules", list, "a list of rule IDs")
        if not all(isinstance(rule, str) for rule in rules):
            raise ValueError("check member 'rules': a list of rule IDs, not all text")
        outcome = _member(data, "outcome", str, "text")
        if outcome not in {member.value for member in Outcome}:
            raise ValueError(f"check member 'outcome': no outcome {outcome!r}")
        step = _member(data, "step", (int, type(None)), "an integer or null")
        if step is not None and step < 0:
            raise ValueError(f"check member 'step': a step index, not {step}")
        duration = _member(data, "duration", (int, float), "a number")
        return cls(
            part=_member(data, "part", str, "text"),
            id=_member(data, "id", str, "text"),
            scenario=_member(data, "scenario", (str, type(None)), "text or null"),
            revision=_member(data, "revision", str, "text"),
            name=_member(data, "name", str, "text"),
            rules=tuple(rules),
            level=_member(data, "level", str, "text"),
            outcome=Outcome(outcome),
            message=_member(data, "message", str, "text"),
            duration=float(duration),
            step=step,
            expected=_member(data, "expected", object, "JSON"),
            found=_member(data, "found", object, "JSON"),
            first_difference=_member(
                data, "firstDifference", (str, type(None)), "text or null"
            ),
            detail=dict(_member(data, "detail", dict, "an object")),
        )


def _member(
    data: Mapping[str, JsonValue],
    name: str,
    kind: type[_T] | tuple[type[_T], ...],
    what: str,
) -> _T:
    """``data[name]`` when it is of `kind`, else a `ValueError` naming it
    (a boolean is no number)."""
    if name not in data:
        raise ValueError(f"check member {name!r} is missing")
    value = data[name]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    numeric = int in kinds or float in kinds
    if not isinstance(value, kinds) or (isinstance(value, bool) and numeric):
        raise ValueError(f"check member {name!r}: {what}, not {_json_type(value)}")
    return value


def _json_type(value: object) -> str:
    """The JSON name of a value's type, for an error message."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list):
        return "a list"
    return "an object" if isinstance(value, dict) else type(value).__name__


def rules_level(rules: Sequence[str]) -> str:
    """``MUST`` when any of `rules` is a MUST rule, else ``SHOULD``: the
    level a check of those rules fails at."""
    registry = load_rules()
    return "MUST" if any(registry[rule].is_must for rule in rules) else "SHOULD"


NO_EXPECTED: Mapping[str, str] = {}


def status_of(check: Check, expected: Mapping[str, str] = NO_EXPECTED) -> str:
    """The check's outcome, or ``xfail``/``xpass`` when `expected` lists it."""
    if check.id in expected:
        if check.outcome in (Outcome.FAIL, Outcome.WARN):
            return "xfail"
        if check.outcome is Outcome.PASS:
            return "xpass"
    return check.outcome.value


STATUSES = ("pass", "warn", "fail", "error", "skip", "xfail", "xpass")
"""Every status a check can have, in the order reports list them."""


@dataclass(slots=True, kw_only=True)
class RuleRow:
    """The tally of one rule over every check that names it."""

    rule: str
    level: str
    counts: Counter[str] = field(default_factory=Counter)
    """Checks per status (`status_of`)."""
    first_problem: str = ""
    """The id of the first check that failed, warned or errored on the rule."""

    def dump(self) -> JsonObject:
        """The JSON form (see run-report.schema.json)."""
        return {
            "rule": self.rule,
            "level": self.level,
            "counts": {status: self.counts.get(status, 0) for status in STATUSES},
            "firstProblem": self.first_problem or None,
        }


def rule_table(
    checks: Iterable[Check], *, expected: Mapping[str, str] = NO_EXPECTED
) -> list[RuleRow]:
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
            status = status_of(check, expected)
            row.counts[status] += 1
            if status not in ("pass", "xfail") and not row.first_problem:
                row.first_problem = check.id
    return sorted(rows.values(), key=lambda row: order.get(row.rule, len(order)))


def exit_status(
    checks: Sequence[Check],
    *,
    strict: bool = False,
    startup_error: bool = False,
    expected: Mapping[str, str] = NO_EXPECTED,
) -> int:
    """The run's single verdict as an exit status (module docstring)."""
    tally = Counter(status_of(check, expected) for check in checks)
    if tally["fail"] or tally["xpass"] or (strict and tally["warn"]):
        return BROKEN
    ran = tally["pass"] + tally["warn"] + tally["xfail"]
    if startup_error or tally["error"] or ran == 0:
        return NO_VERDICT
    return CONFORMANT


NO_VERDICT_REASONS: Mapping[int, str] = {
    NO_VERDICT: "some checks could not be run (see the errors above)",
    2: "nothing was checked: the options select nothing this implementation has"
    " (see the notes above)",
}
"""Why ``reqfold run`` gives no verdict, by exit status: `NO_VERDICT`, or 2
when the options select nothing (a command may give its own reasons)."""


def verdict_text(
    status: int,
    checks: Sequence[Check],
    expected: Mapping[str, str] = NO_EXPECTED,
    *,
    reasons: Mapping[int, str] = NO_VERDICT_REASONS,
) -> str:
    """The verdict line for an exit status of `exit_status`, or for another
    status `reasons` explains (``NO VERDICT: <reason>``)."""
    statuses = {status_of(check, expected) for check in checks}
    covered, uncovered = coverage_text(checks)
    if status == CONFORMANT:
        warned = " (with SHOULD warnings)" if "warn" in statuses else ""
        return "CONFORMANT" + warned + (f" {covered}; {uncovered}" if covered else "")
    tail = f"; {uncovered}" if uncovered else ""
    if status == BROKEN:
        if "fail" in statuses:
            return "NOT CONFORMANT: a MUST rule is broken" + tail
        if "xpass" in statuses:
            # Every check conforms: the list of expected failures is what is
            # wrong, so the words must not say the implementation broke a rule.
            return (
                "STALE EXPECTED FAILURE: every check conforms, but an expected"
                " failure passed (remove its entry from the expected failures)" + tail
            )
        return "NOT CONFORMANT: a SHOULD rule is broken, and --strict counts it" + tail
    return f"NO VERDICT: {reasons[status]}" + tail


def not_covered(checks: Iterable[Check]) -> dict[str, str]:
    """Scenario runs not covered (a skipped scenario check), by ``scenario@revision``,
    each with its reason."""
    return {
        check.run: str(check.detail[NOT_COVERED_REASON])
        for check in checks
        if check.run is not None
        and check.outcome is Outcome.SKIP
        and NOT_COVERED_REASON in check.detail
    }


def coverage_text(checks: Sequence[Check]) -> tuple[str, str]:
    """What the scenario part covered, in words, when a run was not covered:
    ``("on 23 of 24 scenario runs", "not covered: ID (reason)")``; two
    empty strings when every scenario run played covers its scenario."""
    missing = not_covered(checks)
    if not missing:
        return "", ""
    runs = {check.run for check in checks if check.part == "scenarios"}
    scenario_by_run = {check.run: check.scenario for check in checks}
    by_reason: dict[str, list[str]] = {}
    for key, reason in missing.items():
        scenario = scenario_by_run[key] or key
        names = by_reason.setdefault(reason, [])
        if scenario not in names:
            names.append(scenario)
    listed = "; ".join(
        f"{', '.join(names)} ({reason})" for reason, names in by_reason.items()
    )
    return (
        f"on {len(runs) - len(missing)} of {len(runs)} scenario runs",
        f"not covered: {listed}",
    )


def render_table(rows: Sequence[RuleRow]) -> list[str]:
    """The per-rule table as text lines (xfail and xpass columns when any)."""
    statuses = ["pass", "warn", "fail", "error"]
    if any(row.counts["xfail"] or row.counts["xpass"] for row in rows):
        statuses += ["xfail", "xpass"]
    lines = [
        f"  {'rule':<10} {'level':<10} "
        + " ".join(f"{status:>5}" for status in statuses)
        + "  first problem"
    ]
    lines.extend(
        f"  {row.rule:<10} {row.level:<10} "
        + " ".join(f"{row.counts[status]:>5}" for status in statuses)
        + f"  {row.first_problem}".rstrip()
        for row in rows
    )
    return lines

"""The report of one ``reqfold run``, as plain data, and its JSON form.

A `RunReport` holds what every format shows: the suite (version and a
digest of its vectors and scenarios), the implementation's ``initialize``
answer, one `ShownCheck` per check with its status, the per-rule tally,
each scenario's requests as the fake provider's cache saw them
(`ScenarioTrace`), the notes on what was not run, and the verdict.

A check's status is its outcome (``pass``, ``warn``, ``fail``, ``error``,
``skip``), or, for a check listed in the expected failures, ``xfail``
(it failed or warned, as expected) or ``xpass`` (it passed: the entry is
stale, and the run fails). `build_report` is pure: the shell measures
times and gathers evidence, this module only arranges them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields

from reqfold.conformance.outcomes import Outcome
from reqfold.conformance.verdict import STATUSES, Check, RuleRow, rule_table, status_of
from reqfold.reference.json_values import JsonObject, JsonValue

FORMAT = "reqfold-run/1"
"""The format id of the JSON report; the number changes when a member's
meaning changes, never for a member added."""

CHECK_FIELDS = tuple(item.name for item in fields(Check))
"""The fields of a `Check`, which a `ShownCheck` carries whole."""

PROBLEMS = frozenset({"warn", "fail", "error", "xpass"})
"""Statuses a report expands with their message (and reproduction)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Reproduction:
    """The least it takes to see one failure again.

    `kind` is ``vector``, ``property`` or ``scenario``; `subject` is the
    vector (id, method, revision, params) or the scenario and the steps up
    to the one the check is about; `expected` and `found` are what the
    spec wanted and what the implementation did (None when the evidence
    does not hold it); `first_difference` is the path of the first place
    they differ (a JSON path, or the request field where the cache broke).
    """

    kind: str
    command: str
    subject: JsonObject
    expected: JsonValue = None
    found: JsonValue = None
    first_difference: str | None = None

    def dump(self) -> JsonObject:
        """The JSON form (see run-report.schema.json)."""
        return {
            "kind": self.kind,
            "command": self.command,
            "subject": self.subject,
            "expected": self.expected,
            "found": self.found,
            "firstDifference": self.first_difference,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class ShownCheck(Check):
    """A check as every report shows it: the `Check` itself, plus its status
    (`status_of`: the outcome, or xfail/xpass), the reason shown beside it
    and its reproduction."""

    status: str
    reason: str = ""
    """Why it was skipped, or the expected failure's reason (xfail, xpass)."""
    reproduction: Reproduction | None = None

    def dump(self) -> JsonObject:
        """The JSON form in a report (see run-report.schema.json)."""
        return {
            "id": self.id,
            "part": self.part,
            "scenario": self.scenario,
            "revision": self.revision,
            "rules": list(self.rules),
            "level": self.level,
            "status": self.status,
            "message": self.message,
            "reason": self.reason,
            "duration": round(self.duration, 6),
            "reproduction": None
            if self.reproduction is None
            else self.reproduction.dump(),
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestPoint:
    """One request of a scenario run, as the fake provider's cache saw it."""

    position: int
    """Its place among the session's requests (0 is the first)."""
    instance: str
    prompt_tokens: int
    cached_tokens: int
    uncached_tokens: int
    relation: str | None
    """The fake's diagnostic: ``first``, ``repeat``, ``append`` or
    ``diverged`` (None when the fake answered with an error)."""
    closest: int | None
    """The position of the earlier request it was compared with."""
    broke: bool
    """The cache broke here: it does not extend the request before it."""
    why: str = ""
    """Why it broke, from the fake's first-divergence diagnostic."""
    first_difference: str | None = None
    check: str | None = None
    """The id of the cache check judging this request, if one ran."""
    check_status: str | None = None
    stream: str = ""
    """The stream the cache judgement put it in (``main``, ``side 1``, ...)."""
    cause: str = ""
    """Where it broke: the cause the cache judgement named (docs/cache.md)."""
    lost_tokens: int = 0
    """Where it broke: the tokens lost against a pure append."""
    expected: bool = False
    """It broke, but not the contract: the log explains it (no failing or
    warning cache check), or it has a shape the judgement expects."""

    def dump(self) -> JsonObject:
        """The JSON form (see run-report.schema.json)."""
        return {
            "position": self.position,
            "instance": self.instance,
            "promptTokens": self.prompt_tokens,
            "cachedTokens": self.cached_tokens,
            "uncachedTokens": self.uncached_tokens,
            "relation": self.relation,
            "closest": self.closest,
            "broke": self.broke,
            "why": self.why,
            "firstDifference": self.first_difference,
            "check": self.check,
            "checkStatus": self.check_status,
            "stream": self.stream,
            "cause": self.cause,
            "lostTokens": self.lost_tokens,
            "expectedBreak": self.expected,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class ScenarioTrace:
    """The requests of one scenario run, in the order the fake received them."""

    scenario: str
    revision: str
    title: str
    requests: tuple[RequestPoint, ...] = ()

    @property
    def key(self) -> str:
        """``scenario@revision``, the prefix of its checks' ids."""
        return f"{self.scenario}@{self.revision}"

    @property
    def prompt_tokens(self) -> int:
        """Prompt tokens over every request."""
        return sum(point.prompt_tokens for point in self.requests)

    @property
    def cached_tokens(self) -> int:
        """Cached prompt tokens over every request."""
        return sum(point.cached_tokens for point in self.requests)

    @property
    def lost_tokens(self) -> int:
        """Tokens lost against a pure append at the breaks not expected."""
        return sum(
            point.lost_tokens
            for point in self.requests
            if point.broke and not point.expected
        )

    @property
    def breaks(self) -> int:
        """How many requests broke the cache unexpectedly."""
        return sum(1 for point in self.requests if point.broke and not point.expected)

    @property
    def hit_ratio(self) -> float | None:
        """Cached over prompt tokens (None when no token was sent)."""
        total = self.prompt_tokens
        return None if total == 0 else self.cached_tokens / total

    def dump(self) -> JsonObject:
        """The JSON form (see run-report.schema.json)."""
        ratio = self.hit_ratio
        return {
            "scenario": self.scenario,
            "revision": self.revision,
            "title": self.title,
            "promptTokens": self.prompt_tokens,
            "cachedTokens": self.cached_tokens,
            "hitRatio": None if ratio is None else round(ratio, 6),
            "lostTokens": self.lost_tokens,
            "breaks": self.breaks,
            "requests": [point.dump() for point in self.requests],
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class RunReport:
    """Everything one run's reports show (module docstring)."""

    suite: JsonObject
    implementation: JsonObject
    command: str
    options: JsonObject
    checks: tuple[ShownCheck, ...]
    rules: tuple[RuleRow, ...]
    traces: tuple[ScenarioTrace, ...]
    notes: tuple[str, ...]
    startup_error: str | None
    exit_status: int
    verdict: str
    duration: float
    expected_failures: Mapping[str, str] = field(default_factory=dict)
    tool: str = "reqfold run"
    """The command that judged, as the reports' titles name it (not in the
    JSON: a probe's report is told by its part, ``probe``)."""

    def counts(self, part: str | None = None) -> dict[str, int]:
        """How many checks (of `part`, or of every part) have each status."""
        tally = Counter(
            check.status for check in self.checks if part is None or check.part == part
        )
        return {status: tally.get(status, 0) for status in STATUSES}

    @property
    def parts(self) -> list[str]:
        """The parts that ran, in run order."""
        seen: dict[str, None] = {}
        for check in self.checks:
            seen.setdefault(check.part, None)
        return list(seen)

    def dump(self) -> JsonObject:
        """The JSON report (see run-report.schema.json)."""
        return {
            "format": FORMAT,
            "suite": self.suite,
            "implementation": self.implementation,
            "command": self.command,
            "options": self.options,
            "verdict": {"exitStatus": self.exit_status, "text": self.verdict},
            "startupError": self.startup_error,
            "notes": list(self.notes),
            "counts": self.counts(),
            "parts": {part: self.counts(part) for part in self.parts},
            "expectedFailures": dict(self.expected_failures),
            "rules": [row.dump() for row in self.rules],
            "checks": [check.dump() for check in self.checks],
            "scenarios": [trace.dump() for trace in self.traces],
            "duration": round(self.duration, 6),
        }


def build_report(
    *,
    suite: JsonObject,
    implementation: JsonObject,
    command: str,
    options: JsonObject,
    checks: Sequence[Check],
    reproductions: Mapping[str, Reproduction],
    traces: Iterable[ScenarioTrace],
    notes: Sequence[str],
    startup_error: str | None,
    expected: Mapping[str, str],
    exit_status: int,
    verdict: str,
    duration: float,
    tool: str = "reqfold run",
) -> RunReport:
    """Arrange a run's results into a `RunReport` (pure)."""
    records = []
    for check in checks:
        status = status_of(check, expected)
        if status in ("xfail", "xpass"):
            reason = expected[check.id]
        elif check.outcome is Outcome.SKIP:
            reason = check.message
        else:
            reason = ""
        records.append(
            ShownCheck(
                **{name: getattr(check, name) for name in CHECK_FIELDS},
                status=status,
                reason=reason,
                reproduction=reproductions.get(check.id)
                if status in PROBLEMS or status == "xfail"
                else None,
            )
        )
    rows = tuple(rule_table(checks, expected=expected))
    return RunReport(
        suite=suite,
        implementation=implementation,
        command=command,
        options=options,
        checks=tuple(records),
        rules=rows,
        traces=tuple(traces),
        notes=tuple(notes),
        startup_error=startup_error,
        exit_status=exit_status,
        verdict=verdict,
        duration=duration,
        expected_failures=dict(expected),
        tool=tool,
    )

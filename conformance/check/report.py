"""Collecting a check's findings per file and printing them (text or JSON).

The report keeps at most `MAX_PER_RULE` findings of each rule (counting the
rest), so memory stays bounded even for a log that breaks a rule on every
line. The text form is for people (each rule's text is printed once, at its
first finding); the JSON form (`FORMAT`) prints one object per log file on
one line.

Outcomes, as Bowtie keeps them apart: *fail* (a MUST finding, or a SHOULD
finding under ``--strict``), *error* (the checker could not check a line,
or the file: no verdict), *pass*.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from reqfold.conformance.check.findings import ERROR, MUST, SHOULD, Finding
from reqfold.conformance.check.log_rules import LogSummary
from reqfold.conformance.rules import load_rules

MAX_PER_RULE = 200
FORMAT = "reqfold-check/1"
"""The version of the ``--format json`` object, named in its ``format`` member."""

PASS, FAIL, NO_VERDICT = "pass", "fail", "error"


@dataclass(slots=True)
class FileReport:
    """The outcome of checking one file."""

    path: str
    summary: LogSummary = field(default_factory=LogSummary)
    findings: list[Finding] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)
    """Findings per level (MUST, SHOULD, ERROR), suppressed ones included."""
    suppressed: Counter[str] = field(default_factory=Counter)
    error: str | None = None
    """Why the file could not be checked at all (unreadable), or None."""
    strict: bool = False
    notes: list[str] = field(default_factory=list)
    """What the reader should know about how the file was read."""

    def collect(self, findings: Iterable[Finding]) -> None:
        """Take findings as they stream, keeping `MAX_PER_RULE` of each rule."""
        per_rule: Counter[str] = Counter(f.rule for f in self.findings)
        for item in findings:
            self.counts[item.level] += 1
            if per_rule[item.rule] < MAX_PER_RULE:
                per_rule[item.rule] += 1
                self.findings.append(item)
            else:
                self.suppressed[item.rule] += 1

    @property
    def failing(self) -> int:
        """How many findings fail the check (SHOULD ones only in strict mode)."""
        return self.counts[MUST] + self.counts[SHOULD] * self.strict

    @property
    def outcome(self) -> str:
        """``fail``; else ``error`` (unreadable, a line not checked); else ``pass``."""
        if self.error is None and self.failing:
            return FAIL
        if self.error is not None or self.counts[ERROR]:
            return NO_VERDICT
        return PASS

    @property
    def ok(self) -> bool:
        """Checked, with no failing finding and no checker error."""
        return self.outcome == PASS

    @property
    def status(self) -> int:
        """The exit status for this file alone: 0 pass, 1 fail, 2 unreadable,
        3 no verdict (the checker could not check a line, and nothing failed)."""
        if self.error is not None:
            return 2
        return {PASS: 0, FAIL: 1, NO_VERDICT: 3}[self.outcome]

    def dump(self) -> dict[str, Any]:
        """The ``--format json`` object for this file (`FORMAT`)."""
        if self.error is not None:
            return {
                "format": FORMAT,
                "path": self.path,
                "ok": False,
                "outcome": self.outcome,
                "error": self.error,
            }
        summary = self.summary
        return {
            "format": FORMAT,
            "path": self.path,
            "ok": self.ok,
            "outcome": self.outcome,
            "revision": summary.revision.value,
            "revision_source": summary.revision_source,
            "lines": summary.lines,
            "events": summary.events,
            "unknown_events": sum(summary.unknown_types.values())
            + summary.unknown_other,
            "unknown_types": dict(sorted(summary.unknown_types.items())),
            "unknown_other_events": summary.unknown_other,
            "steps_dispatched": summary.steps_dispatched,
            "steps_unrebuilt": summary.steps_unrebuilt,
            "requests_matched": summary.requests_matched,
            "requests_uncompared": dict(sorted(summary.requests_uncompared.items())),
            "must": self.counts[MUST],
            "should": self.counts[SHOULD],
            "errors": self.counts[ERROR],
            "findings": [item.dump() for item in self.findings],
            "suppressed": dict(self.suppressed),
            "notes": list(self.notes),
        }


def combined_status(statuses: Iterable[int]) -> int:
    """One exit status for several files: unreadable (2) over fail (1) over
    no verdict (3) over pass (0)."""
    rank = {0: 0, 3: 1, 1: 2, 2: 3}
    return max(statuses, key=rank.__getitem__, default=0)


def render_json(report: FileReport) -> str:
    """One line of JSON for one file, in ASCII: a path that is not UTF-8 (its
    bytes kept as lone surrogates) or a lone surrogate a finding quotes is
    written as its escape, so the line is always valid UTF-8 and the path
    is given back whole by ``os.fsencode``."""
    return json.dumps(report.dump(), ensure_ascii=True, separators=(",", ":"))


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


VERDICTS = {PASS: "CONFORMANT", FAIL: "NOT CONFORMANT", NO_VERDICT: "NO VERDICT"}
"""The words of a file's verdict: those of ``reqfold run`` and every tool."""


def render_text(report: FileReport, *, colour: bool = False) -> str:
    """A readable report: a verdict line, then one block per finding.

    With `colour` (stdout is a terminal, ``NO_COLOR`` unset) the verdict's
    words are painted as every tool paints its verdict.

    Each finding shows its own level (a MUST rule's SHOULD clause is a
    SHOULD finding); the text of each rule is shown once, at its first
    finding. A file that could not be read has no text report: the shell
    says so on stderr.
    """
    summary = report.summary
    parts = [
        f"{_plural(summary.events, 'event')} on {_plural(summary.lines, 'line')}",
        f"revision {summary.revision.value} ({summary.revision_source})",
    ]
    if summary.unknown_types:
        kinds = ", ".join(
            f"{kind} x{count}" for kind, count in summary.unknown_types.most_common()
        )
        if summary.unknown_other:
            kinds += f", {summary.unknown_other} event(s) of further types"
        parts.append(f"unknown event types skipped: {kinds}")
    steps = _plural(summary.steps_dispatched, "step")
    if summary.reconstructing:
        parts.append(
            f"{steps} dispatched, {summary.requests_matched} matched to captured"
            " requests"
        )
    else:
        parts.append(f"{steps} dispatched a request")
    if summary.steps_unrebuilt:
        parts.append(
            f"{summary.steps_unrebuilt} of them cannot be rebuilt (no readable"
            f" header or history under {summary.revision.value})"
        )
    verdict = VERDICTS[report.outcome]
    if colour:
        from reqfold.conformance.summary import verdict_words

        verdict = verdict_words(report.status, verdict, colour=True)
    lines = [f"{report.path}: {verdict}: " + "; ".join(parts)]
    lines += [f"  note: {note}" for note in report.notes]
    must, should, errors = (report.counts[level] for level in (MUST, SHOULD, ERROR))
    if must or should or errors:
        tally = [
            f"{must} MUST (failing)",
            f"{should} SHOULD (warnings"
            + (", failing: --strict)" if report.strict else ")"),
        ]
        if errors:
            tally.append(
                f"{errors} ERROR (lines the checker could not check: no verdict)"
            )
        lines.append(
            f"  {_plural(must + should + errors, 'finding')}: " + ", ".join(tally)
        )
    rules = load_rules()
    explained: set[str] = set()
    for item in report.findings:
        where = f"line {item.line}" + (
            f", seq {item.seq}" if item.seq is not None else ""
        )
        lines.append(f"  {where}: {item.level} [{item.rule}] {item.message}")
        if item.expected is not None:
            lines.append(f"      expected: {item.expected}")
        if item.found is not None:
            lines.append(f"      found:    {item.found}")
        rule = rules.get(item.rule)
        if rule is not None and item.level != ERROR and item.rule not in explained:
            explained.add(item.rule)
            lines.append(f"      {item.rule}: {_cut(rule.text, 150)}")
    for rule_id, count in report.suppressed.items():
        lines.append(f"  ... and {count} more {rule_id} findings not shown")
    return "\n".join(lines)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"

"""Collecting a check's findings per file and printing them (text or JSON).

The report keeps at most `MAX_PER_RULE` findings of each rule (counting the
rest), so memory stays bounded even for a log that breaks a rule on every
line. The text form is for people; the JSON form prints one object per log
file on one line.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from conformance.check.findings import MUST, Finding
from conformance.check.log_rules import LogSummary
from conformance.rules import load_rules

MAX_PER_RULE = 200


@dataclass(slots=True)
class FileReport:
    """The outcome of checking one file."""

    path: str
    summary: LogSummary = field(default_factory=LogSummary)
    findings: list[Finding] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)
    suppressed: Counter[str] = field(default_factory=Counter)
    error: str | None = None
    strict: bool = False

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
    def ok(self) -> bool:
        """No failing finding (SHOULD findings fail only in strict mode)."""
        if self.error is not None:
            return False
        failing = (
            self.counts[MUST]
            + (sum(self.counts.values()) - self.counts[MUST]) * self.strict
        )
        return failing == 0

    def dump(self) -> dict[str, Any]:
        """The ``--format json`` object for this file."""
        if self.error is not None:
            return {"path": self.path, "ok": False, "error": self.error}
        summary = self.summary
        return {
            "path": self.path,
            "ok": self.ok,
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
            "must": self.counts[MUST],
            "should": sum(self.counts.values()) - self.counts[MUST],
            "violations": [item.dump() for item in self.findings],
            "suppressed": dict(self.suppressed),
        }


def render_json(report: FileReport) -> str:
    """One line of JSON for one file."""
    return json.dumps(report.dump(), ensure_ascii=False, separators=(",", ":"))


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def render_text(report: FileReport) -> str:
    """A readable report: a verdict line, then one block per finding."""
    if report.error is not None:
        return f"{report.path}: cannot check: {report.error}"
    summary = report.summary
    must = report.counts[MUST]
    should = sum(report.counts.values()) - must
    verdict = "ok" if report.ok else "FAIL"
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
    lines = [f"{report.path}: {verdict}: " + "; ".join(parts)]
    if must or should:
        lines.append(
            f"  {_plural(must, 'violation')} of MUST rules,"
            f" {_plural(should, 'warning')} (SHOULD)"
            + (" (failing: --strict)" if report.strict and should else "")
        )
    rules = load_rules()
    for item in report.findings:
        where = f"line {item.line}" + (
            f", seq {item.seq}" if item.seq is not None else ""
        )
        label = "error" if item.level == MUST else "warning"
        lines.append(f"  {where}: {label} [{item.rule}] {item.message}")
        if item.expected is not None:
            lines.append(f"      expected: {item.expected}")
        if item.found is not None:
            lines.append(f"      found:    {item.found}")
        rule = rules.get(item.rule)
        if rule is not None:
            lines.append(f"      {item.rule} ({rule.level}): {_cut(rule.text, 150)}")
    for rule_id, count in report.suppressed.items():
        lines.append(f"  ... and {count} more {rule_id} findings not shown")
    return "\n".join(lines)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"

"""The Markdown report: a CI step summary (GitHub's ``$GITHUB_STEP_SUMMARY``).

The verdict first, a table of checks per part, each problem with its
reproduction folded in a ``<details>`` block, the expected failures and
the skips with their reasons, the notes, each scenario's cache hit ratio
and where its cache broke, and the per-rule table. No durations: the same
run gives the same text.
"""

from __future__ import annotations

import html
import json

from reqfold.conformance.report.model import PROBLEMS, RunReport, ShownCheck
from reqfold.conformance.report.notes import sorted_notes
from reqfold.conformance.terminal_text import printable
from reqfold.conformance.verdict import STATUSES


def _cell(value: object) -> str:
    """`value` as inline text: one line, HTML's ``<``, ``>`` and ``&`` as
    entities and Markdown's punctuation (links, images, emphasis, code,
    table pipes) escaped, so what an adapter said (its name, a startup
    error, a note) can never become markup where the summary is rendered."""
    text = html.escape(" ".join(str(value).split()), quote=False)
    for char in "\\`*_[]!|":
        text = text.replace(char, "\\" + char)
    return text


def _code(value: str) -> str:
    ticks = "``" if "`" in value else "`"
    pad = " " if value.startswith("`") or value.endswith("`") else ""
    return f"{ticks}{pad}{value}{pad}{ticks}"


def _ratio(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def render_markdown(report: RunReport) -> str:
    """The report as Markdown text."""
    identity = report.implementation
    name = f"{identity.get('name', '?')} {identity.get('version', '')}".strip()
    out = [
        f"# {report.tool}: {report.verdict}",
        "",
        f"- implementation: **{_cell(name)}**"
        + (f" ({_cell(identity['language'])})" if identity.get("language") else ""),
        "- revisions: "
        + (_cell(", ".join(map(str, identity.get("revisions", [])))) or "none"),
        f"- suite: reqfold {report.suite.get('version')},"
        f" digest {_code(str(report.suite.get('digest'))[:19])}",
        f"- exit status: {report.exit_status}",
        "",
    ]
    if report.startup_error:
        out += [
            f"**The implementation did not start:** {_cell(report.startup_error)}",
            "",
        ]
    if report.parts:
        out += ["| part | checks | " + " | ".join(STATUSES) + " |"]
        out += ["|---|---:|" + "---:|" * len(STATUSES)]
    for part in report.parts:
        counts = report.counts(part)
        out.append(
            f"| {part} | {sum(counts.values())} | "
            + " | ".join(str(counts[status]) for status in STATUSES)
            + " |"
        )
    out.append("")
    problems = [check for check in report.checks if check.status in PROBLEMS]
    if problems:
        out += ["## Problems", ""]
        for check in problems:
            out += _problem(check)
    xfails = [check for check in report.checks if check.status == "xfail"]
    if xfails:
        out += ["## Expected failures", ""]
        out += [f"- {_code(check.id)}: {_cell(check.reason)}" for check in xfails]
        out.append("")
    skips = [check for check in report.checks if check.status == "skip"]
    plain, ran, not_run = sorted_notes(report.notes, tool=report.tool)
    if plain:
        out += ["## Notes", ""]
        out += [f"- {_cell(note)}" for note in plain]
        out.append("")
    if ran:
        out += ["## Also run", ""]
        out += [f"- {_cell(note)}" for note in ran]
        out.append("")
    if skips or not_run:
        out += ["## Not run", ""]
        out += [f"- {_cell(note)}" for note in not_run]
        out += [
            f"- {_code(check.id)} skipped: {_cell(check.reason)}" for check in skips
        ]
        out.append("")
    if report.traces:
        out += _cache_table(report)
    if report.rules:
        out += ["## Rules", ""]
        out += ["| rule | level | " + " | ".join(STATUSES) + " | first problem |"]
        out += ["|---|---|" + "---:|" * len(STATUSES) + "---|"]
        for row in report.rules:
            out.append(
                f"| {row.rule} | {row.level} | "
                + " | ".join(str(row.counts.get(status, 0)) for status in STATUSES)
                + f" | {_code(row.first_problem) if row.first_problem else ''} |"
            )
        out.append("")
    # what an implementation sent (an error message, a check id) may hold
    # control characters: they are shown as escapes, never written raw
    return printable("\n".join(out))


def _problem(check: ShownCheck) -> list[str]:
    mark = {"fail": "FAIL", "xpass": "STALE", "error": "ERROR", "warn": "WARN"}
    lines = [
        f"### {mark[check.status]} {_code(check.id)}",
        "",
        f"rules: {', '.join(check.rules)} ({check.level})",
        "",
    ]
    if check.status == "xpass":
        lines += [
            f"Listed as an expected failure ({_cell(check.reason)}) but it passed:"
            " remove the entry.",
            "",
        ]
    if check.message:
        lines += ["```text", check.message.replace("```", "'''"), "```", ""]
    repro = check.reproduction
    if repro is not None:
        shown: dict[str, object] = {"subject": repro.subject}
        if repro.expected is not None or repro.found is not None:
            shown |= {"expected": repro.expected, "found": repro.found}
        body = json.dumps(
            shown,
            indent=2,
            ensure_ascii=False,
        ).replace("```", "'''")
        lines += [
            "<details><summary>reproduction"
            + (
                f": first difference at {_code(repro.first_difference)}"
                if repro.first_difference
                else ""
            )
            + "</summary>",
            "",
            f"    {repro.command}",
            "",
            "```json",
            body,
            "```",
            "",
            "</details>",
            "",
        ]
    return lines


def _cache_table(report: RunReport) -> list[str]:
    lines = [
        "## Prompt cache per scenario",
        "",
        "| scenario | revision | requests | prompt tokens | cached | hit ratio"
        " | cache broke at |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    for trace in report.traces:
        # Only a break a cache check failed on is a fault; one the log
        # explains (a header change, a compaction) is expected.
        breaks = [
            f"request {point.position}"
            + (
                f" ({point.check_status.upper()})"
                if point.check_status in PROBLEMS
                else " (expected)"
            )
            + (f" {point.cause}" if point.cause else "")
            + (f", {point.lost_tokens} tokens lost" if point.lost_tokens else "")
            for point in trace.requests
            if point.broke
        ]
        lines.append(
            f"| {trace.scenario} | {trace.revision} | {len(trace.requests)}"
            f" | {trace.prompt_tokens} | {trace.cached_tokens}"
            f" | {_ratio(trace.hit_ratio)} | {_cell(', '.join(breaks)) or '-'} |"
        )
    lines.append("")
    return lines

"""The HTML report: one self-contained page (no script, no network).

What it shows, top to bottom: the verdict and the implementation; what
failed (each problem's check id, linked to its details below, and the
text of each broken rule, linked to its row of the matrix), so the
failure is on the first screen; the checks per part; a rule x scenario
matrix (each cell the worst status of the checks of that column naming
that rule, the codec parts as two more columns); every problem expanded
with its reproduction; the expected failures, skips and notes with their
reasons; and per scenario run a chart of cached vs uncached prompt
tokens request by request, inline SVG, with each point where the cache
broke marked and the fake provider's first-divergence diagnostic saying
why, over a table of the same numbers.
Every number shown is in the JSON report too; the elements that hold them
carry ``data-*`` attributes naming what they are, for tests and scrapers.

It fits a 1,400 px window: wide tables and charts scroll in their own box,
long ids and lines wrap. Only a failed check is red: a cache break the log
explains (a header change, a compaction: no cache check failed on it) is
marked in a neutral colour.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from html import escape

from reqfold.conformance.report.model import (
    PROBLEMS,
    Reproduction,
    RequestPoint,
    RunReport,
    ScenarioTrace,
    ShownCheck,
)
from reqfold.conformance.report.notes import sorted_notes
from reqfold.conformance.rules import load_rules
from reqfold.conformance.terminal_text import printable
from reqfold.conformance.verdict import STATUSES

SEVERITY = ("skip", "pass", "xfail", "warn", "error", "xpass", "fail")
"""Statuses from least to most severe: a matrix cell shows the worst."""

SYMBOL = {
    "pass": "✓",
    "warn": "!",
    "fail": "✗",
    "error": "E",
    "skip": "–",
    "xfail": "x",
    "xpass": "X",
}

_CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px; color: #1d2430; }
h1 { font-size: 22px; margin: 0 0 8px; } h2 { font-size: 18px; margin-top: 28px; }
.verdict { padding: 10px 14px; border-radius: 6px; font-weight: 600; }
.v0 { background: #e3f5e6; } .v1 { background: #fbe3e3; }
.v2, .v3 { background: #fff2d6; }
table { border-collapse: collapse; margin: 8px 0; }
th, td { border: 1px solid #d0d6de; padding: 3px 8px; text-align: right; }
th:first-child, td:first-child { text-align: left; }
.matrix td { text-align: center; min-width: 38px; font-family: monospace; }
.matrix td:first-child { text-align: left; white-space: nowrap; }
.s-pass { background: #e3f5e6; } .s-fail, .s-xpass { background: #f6c9c9; }
.s-error { background: #fde2b8; } .s-warn { background: #fff3bf; }
.s-xfail { background: #e6e1f5; } .s-skip { background: #eef0f3; color: #667; }
.matrix th.col { writing-mode: vertical-rl; transform: rotate(180deg);
  text-align: left; font-weight: normal; white-space: nowrap; }
details { border: 1px solid #d0d6de; border-radius: 6px; padding: 6px 10px;
  margin: 8px 0; }
details.problem { border-left: 6px solid #c62828; background: #fff; }
details.problem.s-warn { border-left-color: #e0b000; }
details.problem.s-error { border-left-color: #e07b00; }
.repro th { text-align: left; vertical-align: top; background: #f5f7fa; }
.repro td { text-align: left; } .repro pre { margin: 0; }
summary { cursor: pointer; font-weight: 600; }
pre { background: #f5f7fa; padding: 8px; overflow-x: auto; white-space: pre-wrap; }
code { font-family: ui-monospace, monospace; }
.chart { margin: 6px 0; } .why { color: #a11; } .why.explained { color: #4a5568; }
td.why { text-align: left; max-width: 640px; }
.scroll { overflow-x: auto; max-width: 100%; }
pre, code, summary, li, td.why { overflow-wrap: anywhere; }
.failed { border: 1px solid #e3b4b4; border-radius: 6px; padding: 4px 14px 10px;
  margin: 12px 0; background: #fffafa; }
.failed h2 { margin-top: 8px; }
.failed ol, .failed ul { margin: 4px 0; padding-left: 22px; }
.failed li { margin: 3px 0; } .failed .said { color: #4a5568; }
.legend span { display: inline-block; width: 12px; height: 12px;
  margin: 0 4px -2px 12px; }
"""

CACHED = "#3b8a4f"
UNCACHED = "#e59a3b"
BROKE = "#c62828"
EXPLAINED = "#6b7a90"
"""A break that is no fault: the log or a recognised shape explains it."""


def _failed_break(point: RequestPoint) -> bool:
    """Whether a break is a fault: a cache check judged it and did not pass,
    or, where no check judged it, the cache judgement did not expect it."""
    if point.check_status is not None:
        return point.check_status in PROBLEMS
    return not point.expected


def _explained_class(point: RequestPoint) -> str:
    """The extra class of a break's "why" cell: neutral when it is no fault."""
    return "" if _failed_break(point) else " explained"


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def render_html(report: RunReport) -> str:
    """The report as one self-contained HTML page."""
    identity = report.implementation
    name = f"{identity.get('name', '?')} {identity.get('version', '')}".strip()
    body = [
        f"<h1>{_e(report.tool)}: {_e(name)}</h1>",
        f'<p class="verdict v{report.exit_status}" data-exit-status='
        f'"{report.exit_status}">Verdict: {_e(report.verdict)}</p>',
        "<p>revisions: "
        + _e(", ".join(map(str, identity.get("revisions", []))) or "none")
        + f"; suite reqfold {_e(report.suite.get('version'))},"
        f" digest <code>{_e(str(report.suite.get('digest'))[:19])}</code></p>",
    ]
    if report.startup_error:
        body.append(
            '<p class="why">The implementation did not start:'
            f" {_e(report.startup_error)}</p>"
        )
    body += _failed(report)
    body += _counts(report)
    body += _matrix(report)
    body += _problems(report)
    body += _not_run(report)
    body += _charts(report.traces)
    # what an implementation sent may hold control characters: shown as
    # escapes, never written raw (the page is a text file too)
    return printable(
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{_e(report.tool)}: {_e(report.verdict)}</title>"
        f"<style>{_CSS}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n"
    )


FAILED_LISTED = 20
"""Problems listed by id under the verdict; the rest are linked to."""


def _failed(report: RunReport) -> list[str]:
    """Under the verdict: each problem's id (linked to its details) and the
    text of each rule they break (linked to its row of the matrix)."""
    problems = [check for check in report.checks if check.status in PROBLEMS]
    if not problems:
        return []
    out = [
        '<section class="failed" id="failed">',
        f"<h2>What failed ({len(problems)})</h2>",
        "<ol>",
    ]
    for number, check in enumerate(problems[:FAILED_LISTED]):
        said = check.message.strip().splitlines()[0] if check.message.strip() else ""
        out.append(
            f'<li data-failed-check="{_e(check.id)}"><b>{check.status.upper()}</b>'
            f' <a href="#problem-{number}"><code>{_e(check.id)}</code></a>'
            f" [{_e(', '.join(check.rules))}]"
            + (f' <span class="said">{_e(said)}</span>' if said else "")
            + "</li>"
        )
    out.append("</ol>")
    if len(problems) > FAILED_LISTED:
        out.append(
            f'<p><a href="#problems">{len(problems) - FAILED_LISTED} more'
            " problems</a> are listed below.</p>"
        )
    registry = load_rules()
    broken = list(dict.fromkeys(rule for check in problems for rule in check.rules))
    out.append("<p>The rules they break:</p><ul>")
    for rule in broken:
        known = registry.get(rule)
        text = known.text if known is not None else "(not a rule of docs/spec.md)"
        level = known.level if known is not None else "?"
        out.append(
            f'<li data-failed-rule="{_e(rule)}"><a href="#rule-{_e(rule)}">'
            f"<b>{_e(rule)}</b></a> {_e(level)}: {_e(text)}</li>"
        )
    out += ["</ul>", "</section>"]
    return out


def _counts(report: RunReport) -> list[str]:
    rows = [
        "<h2>Checks</h2>",
        '<table id="counts"><tr><th>part</th><th>checks</th>'
        + "".join(f"<th>{status}</th>" for status in STATUSES)
        + "</tr>",
    ]
    for part in [*report.parts, "all"]:
        counts = report.counts(None if part == "all" else part)
        rows.append(
            f'<tr data-part="{part}"><td>{part}</td>'
            f'<td data-count="checks">{sum(counts.values())}</td>'
            + "".join(
                f'<td data-count="{status}">{counts[status]}</td>'
                for status in STATUSES
            )
            + "</tr>"
        )
    rows.append("</table>")
    return rows


def _worst(statuses: Sequence[str]) -> str:
    return max(statuses, key=SEVERITY.index)


def _matrix(report: RunReport) -> list[str]:
    columns: dict[str, list[ShownCheck]] = {}
    for check in report.checks:
        columns.setdefault(check.scenario or check.part, []).append(check)
    if not columns or not report.rules:
        return []
    out = [
        "<h2>Rules × scenarios</h2>",
        "<p>Each cell: the worst status of the checks of that column naming the"
        " rule, with how many checks had each status.</p>",
        '<div class="scroll"><table class="matrix" id="matrix"><tr><th>rule</th>'
        + "".join(f'<th class="col">{_e(column)}</th>' for column in columns)
        + "</tr>",
    ]
    for row in report.rules:
        cells = [
            f'<td id="rule-{_e(row.rule)}">{_e(row.rule)}'
            f" <small>{_e(row.level)}</small></td>"
        ]
        for column, checks in columns.items():
            mine = [check for check in checks if row.rule in check.rules]
            if not mine:
                cells.append("<td></td>")
                continue
            statuses = [check.status for check in mine]
            worst = _worst(statuses)
            tally = " ".join(
                f"{statuses.count(status)}{SYMBOL[status]}"
                for status in STATUSES
                if status in statuses
            )
            title = "\n".join(f"{check.status}: {check.id}" for check in mine)
            cells.append(
                f'<td class="s-{worst}" data-rule="{_e(row.rule)}"'
                f' data-column="{_e(column)}" data-status="{worst}"'
                f' title="{_e(title)}">{tally}</td>'
            )
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</table></div>")
    return out


def _problems(report: RunReport) -> list[str]:
    problems = [check for check in report.checks if check.status in PROBLEMS]
    if not problems:
        # "None." would read as a clean run where nothing ran at all
        said = (
            "None: nothing was checked (the implementation did not start)."
            if report.startup_error
            else "None: nothing was checked."
            if not report.checks
            else "None."
        )
        return ['<h2 id="problems">Problems</h2>', f"<p>{said}</p>"]
    out = ['<h2 id="problems">Problems</h2>']
    for number, check in enumerate(problems):
        out.append(
            f'<details open class="problem s-{check.status}" id="problem-{number}"'
            f' data-check="{_e(check.id)}">'
            f"<summary>{check.status.upper()} <code>{_e(check.id)}</code>"
            f" [{_e(', '.join(check.rules))}] {_e(check.level)}</summary>"
        )
        if check.status == "xpass":
            out.append(
                f"<p>Listed as an expected failure ({_e(check.reason)}) but it passed:"
                " the entry is stale; remove it.</p>"
            )
        if check.message:
            out.append(f"<pre>{_e(check.message)}</pre>")
        repro = check.reproduction
        if repro is not None:
            out.append(
                f"<p>Reproduce: <code>{_e(repro.command)}</code>"
                + (
                    f"; first difference at <code data-first-difference>"
                    f"{_e(repro.first_difference)}</code>"
                    if repro.first_difference
                    else ""
                )
                + "</p>"
            )
            out.append('<table class="repro">')
            rows: list[tuple[str, object]] = [("subject", repro.subject)]
            if not _nothing_to_compare(repro):
                rows += [("expected", repro.expected), ("found", repro.found)]
            for label, value in rows:
                out.append(
                    f'<tr><th>{label}</th><td><pre data-repro="{label}">'
                    f"{_e(_compact(value))}</pre></td></tr>"
                )
            out.append("</table>")
        out.append("</details>")
    return out


def _nothing_to_compare(repro: Reproduction) -> bool:
    """Whether the reproduction holds neither an expected nor a found value
    (a run error): its rows would only show ``null``."""
    return repro.expected is None and repro.found is None


def _compact(value: object) -> str:
    """JSON with one line per member or item of the top level (steps stay short)."""
    if isinstance(value, dict) and value:
        lines = [
            f"  {json.dumps(key)}: {_compact_inner(item)}"
            for key, item in value.items()
        ]
        return "{\n" + ",\n".join(lines) + "\n}"
    return json.dumps(value, ensure_ascii=False)


def _compact_inner(value: object) -> str:
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        items = [json.dumps(item, ensure_ascii=False) for item in value]
        return "[\n    " + ",\n    ".join(items) + "\n  ]"
    return json.dumps(value, ensure_ascii=False)


def _not_run(report: RunReport) -> list[str]:
    out: list[str] = []
    xfails = [check for check in report.checks if check.status == "xfail"]
    if xfails:
        out += ["<h2>Expected failures</h2>", "<ul>"]
        for check in xfails:
            out.append(
                f'<li data-xfail="{_e(check.id)}"><code>{_e(check.id)}</code>:'
                f" {_e(check.reason)}"
                f"<details><summary>what failed</summary><pre>{_e(check.message)}</pre>"
                "</details></li>"
            )
        out.append("</ul>")
    skips = [check for check in report.checks if check.status == "skip"]
    plain, ran, not_run = sorted_notes(report.notes, tool=report.tool)
    if plain:
        out += ["<h2>Notes</h2>", "<ul>"]
        out += [f"<li>{_e(note)}</li>" for note in plain]
        out.append("</ul>")
    if ran:
        out += ["<h2>Also run</h2>", "<ul>"]
        out += [f"<li>{_e(note)}</li>" for note in ran]
        out.append("</ul>")
    if skips or not_run:
        out += ["<h2>Not run</h2>", "<ul>"]
        out += [f"<li>{_e(note)}</li>" for note in not_run]
        out += [
            f'<li data-skip="{_e(check.id)}"><code>{_e(check.id)}</code> skipped:'
            f" {_e(check.reason)}</li>"
            for check in skips
        ]
        out.append("</ul>")
    return out


def _charts(traces: Sequence[ScenarioTrace]) -> list[str]:
    if not traces:
        return []
    out = [
        "<h2>Prompt cache, request by request</h2>",
        '<p class="legend">Each bar is one request the scenario sent:'
        f'<span style="background:{CACHED}"></span>cached tokens'
        f'<span style="background:{UNCACHED}"></span>uncached tokens'
        f'<span style="background:{BROKE}"></span>the cache broke and a check failed'
        f'<span style="background:{EXPLAINED}"></span>the cache broke where the log'
        " explains it (a header change, a compaction): expected (why below)</p>",
    ]
    for trace in traces:
        out += _chart(trace)
    return out


def _chart(trace: ScenarioTrace) -> list[str]:
    key = trace.key
    ratio = trace.hit_ratio
    out = [
        f'<section class="trace" data-trace="{_e(key)}">',
        f"<h3><code>{_e(key)}</code>: {_e(trace.title)}</h3>",
        f'<p>{len(trace.requests)} requests, <span data-total="prompt">'
        f"{trace.prompt_tokens}</span> prompt tokens, "
        f'<span data-total="cached">{trace.cached_tokens}</span> cached'
        f' (hit ratio <span data-total="ratio">'
        f"{'n/a' if ratio is None else f'{ratio:.1%}'}</span>)</p>",
    ]
    streams = list(dict.fromkeys(point.stream for point in trace.requests))
    if len(streams) > 1:  # one chart per stream: each is judged within itself
        for stream in streams:
            mine = [point for point in trace.requests if point.stream == stream]
            out.append(f'<h4 data-stream="{_e(stream)}">stream {_e(stream)}</h4>')
            out.append(f'<div class="scroll">{_svg(trace, mine)}</div>')
    elif trace.requests:
        out.append(f'<div class="scroll">{_svg(trace, list(trace.requests))}</div>')
    if trace.lost_tokens:
        out.append(
            f'<p class="why">{trace.breaks} unexpected break(s),'
            f' <span data-total="lost">{trace.lost_tokens}</span> tokens lost'
            " against a pure append</p>"
        )
    out.append(
        '<div class="scroll"><table class="requests"><tr><th>request</th>'
        "<th>instance</th>"
        "<th>prompt</th><th>cached</th><th>uncached</th><th>relation</th>"
        "<th>cache check</th><th>where it broke, and why</th></tr>"
    )
    for point in trace.requests:
        check = (
            f'<td class="s-{point.check_status}">{_e(point.check_status)}</td>'
            if point.check_status
            else "<td>-</td>"
        )
        out.append(
            f'<tr data-request="{point.position}">'
            f"<td>{point.position}</td><td>{_e(point.instance)}</td>"
            f'<td data-field="prompt">{point.prompt_tokens}</td>'
            f'<td data-field="cached">{point.cached_tokens}</td>'
            f'<td data-field="uncached">{point.uncached_tokens}</td>'
            f"<td>{_e(point.relation or 'no usage')}"
            + (f" of {point.closest}" if point.closest is not None else "")
            + f"</td>{check}"
            + (
                f'<td class="why{_explained_class(point)}" data-broke="true"'
                f' data-expected="{str(point.expected).lower()}">'
                + (f"<b>{_e(point.cause)}</b>" if point.cause else "")
                + (f" ({point.lost_tokens} tokens lost)" if point.lost_tokens else "")
                + (" expected: " if point.expected else " ")
                + f"{_e(point.why)}</td>"
                if point.broke
                else "<td></td>"
            )
            + "</tr>"
        )
    out += ["</table></div>", "</section>"]
    return out


def _svg(trace: ScenarioTrace, points: Sequence[RequestPoint]) -> str:
    """Stacked bars (cached below, uncached above), a red mark where it broke
    (grey where the break was expected), labelled with its cause."""
    n = len(points)
    bar, gap, left, top, height = 34, 18, 56, 26, 160
    width = left + n * (bar + gap) + gap
    peak = max((point.prompt_tokens for point in points), default=0) or 1
    scale = height / peak
    parts = [
        f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{width}"'
        f' height="{top + height + 40}" role="img"'
        ' aria-label="cached and uncached prompt tokens per request of'
        f' {_e(trace.key)}">',
        f'<line x1="{left - 4}" y1="{top + height}" x2="{width}" y2="{top + height}"'
        ' stroke="#889"/>',
        f'<text x="{left - 8}" y="{top + 4}" text-anchor="end"'
        f' font-size="11">{peak}</text>',
        f'<text x="{left - 8}" y="{top + height}" text-anchor="end"'
        ' font-size="11">0</text>',
    ]
    for slot, point in enumerate(points):
        x = left + gap + slot * (bar + gap)
        colour = BROKE if _failed_break(point) else EXPLAINED
        outline = f' stroke="{colour}" stroke-width="2"' if point.broke else ""
        cached_h = point.cached_tokens * scale
        uncached_h = point.uncached_tokens * scale
        base = top + height
        parts.append(
            f'<g data-bar="{point.position}"><title>request {point.position}:'
            f" {point.cached_tokens} cached, {point.uncached_tokens} uncached of"
            f" {point.prompt_tokens}</title>"
            f'<rect x="{x}" y="{base - cached_h:.1f}" width="{bar}"'
            f' height="{cached_h:.1f}" fill="{CACHED}"{outline}/>'
            f'<rect x="{x}" y="{base - cached_h - uncached_h:.1f}" width="{bar}"'
            f' height="{uncached_h:.1f}" fill="{UNCACHED}"{outline}/>'
            f'<text x="{x + bar / 2}" y="{base - cached_h - uncached_h - 4:.1f}"'
            f' text-anchor="middle" font-size="10">{point.cached_tokens}/'
            f"{point.prompt_tokens}</text>"
            f'<text x="{x + bar / 2}" y="{base + 14}" text-anchor="middle"'
            f' font-size="11">#{point.position}</text></g>'
        )
        if point.broke:
            fault = _failed_break(point)
            mark = f"✕ {point.cause or 'broke'}" if fault else "expected"
            parts.append(
                f'<g data-break="{point.position}"'
                f' data-explained="{"false" if fault else "true"}">'
                f"<title>{_e(point.why)}</title>"
                f'<line x1="{x - gap / 2}" y1="{top - 6}" x2="{x - gap / 2}"'
                f' y2="{base + 4}" stroke="{colour}" stroke-width="2"'
                ' stroke-dasharray="4 3"/>'
                f'<text x="{x + bar / 2}" y="{base + 30}" text-anchor="middle"'
                f' font-size="11" fill="{colour}">{_e(mark)}</text></g>'
            )
    parts.append("</svg>")
    return "".join(parts)

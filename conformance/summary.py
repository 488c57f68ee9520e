"""What a judging command prints last: the failing rules, the problems and
the verdict, in that order, so the failure is on screen when the run ends.

``reqfold run`` and ``reqfold probe`` end with the same three blocks
(issue 29): the rule table (only the rules with a problem, unless ``--show
all``), every failing, warning or erroring check with its message (right
above the verdict), and the verdict line. On a terminal they are coloured;
`colour_wanted` honours ``NO_COLOR`` (https://no-color.org) and a dumb
terminal. The other judging commands (``reqfold vectors``, ``check``, the
cache judgement) say their verdict with `verdict_line` and colour it the
same way, so this module sits below every tool, beside `verdict`.

Pure: checks in, lines out (`paint` only wraps text in escape codes).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from reqfold.conformance.outcomes import MARKS
from reqfold.conformance.terminal_text import SUITE_STYLES
from reqfold.conformance.verdict import (
    BROKEN,
    CONFORMANT,
    NO_EXPECTED,
    Check,
    RuleRow,
    render_table,
    status_of,
)

RED, YELLOW, GREEN, MAGENTA, BOLD = "31", "33", "32", "35", "1"
_STYLE_OF_STATUS = {
    "fail": RED,
    "xpass": RED,
    "warn": YELLOW,
    "error": MAGENTA,
}
PROBLEM_STATUSES = frozenset(_STYLE_OF_STATUS)
"""The statuses (`status_of`) a run lists as problems."""


def colour_wanted(stream: Any, environ: Mapping[str, str]) -> bool:
    """Colour only on a terminal, and never when ``NO_COLOR`` is set to
    anything but the empty string, or ``TERM`` is ``dumb``."""
    if environ.get("NO_COLOR", "") != "" or environ.get("TERM") == "dumb":
        return False
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def paint(text: str, style: str, colour: bool) -> str:
    """`text` in the SGR `style` (``"31"``, ``"1;31"``) when `colour`; only
    the styles `SUITE_STYLES` lists, which the escaping stream lets through."""
    if not (colour and text):
        return text
    if style not in SUITE_STYLES:
        raise ValueError(f"not one of the suite's colours: {style!r}")
    return f"\x1b[{style}m{text}\x1b[0m"


def check_mark(check: Check, expected: Mapping[str, str] = NO_EXPECTED) -> str:
    """The five-column mark a check's line starts with (`MARKS`; xfail, XPASS)."""
    status = status_of(check, expected)
    return {"xfail": "xfail", "xpass": "XPASS"}.get(status, MARKS[check.outcome])


def check_lines(
    check: Check,
    expected: Mapping[str, str] = NO_EXPECTED,
    *,
    colour: bool = False,
    with_part: bool = True,
) -> list[str]:
    """``  FAIL   PART  ID  [RULES]`` and the message's lines under it."""
    style = _STYLE_OF_STATUS.get(status_of(check, expected), "")
    mark = paint(check_mark(check, expected), f"{BOLD};{style}", colour and bool(style))
    part = f"  {check.part}" if with_part else ""
    lines = [f"  {mark}{part}  {check.id}  [{','.join(check.rules)}]"]
    lines.extend(f"         {line}" for line in check.message.splitlines() if line)
    return lines


def has_problem(row: RuleRow) -> bool:
    """Whether any check on the rule failed, warned, errored or passed stale."""
    return any(row.counts[status] for status in PROBLEM_STATUSES)


def _notable(row: RuleRow) -> bool:
    """A problem, or an expected failure: listed without ``--show all``."""
    return has_problem(row) or bool(row.counts["xfail"])


def rule_lines(
    rows: Sequence[RuleRow], *, show_all: bool, colour: bool = False
) -> list[str]:
    """``Rules`` and the table: every rule with `show_all`, else only the
    rules with a problem (each marked ``>``, and red on a terminal) or an
    expected failure."""
    if not rows:  # not "all 0 pass": nothing was judged
        return ["Rules: none judged (nothing ran)"]
    shown = list(rows) if show_all else [row for row in rows if _notable(row)]
    hidden = len(rows) - len(shown)
    if not shown:
        return [f"Rules: all {len(rows)} pass (--show all lists them)"]
    header, *table = render_table(shown)
    more = f" with a problem ({hidden} more pass: --show all)" if hidden else ""
    if not any(has_problem(row) for row in shown):
        more = f" with an expected failure ({hidden} more pass: --show all)"
    lines = ["Rules" + more]
    lines.append(header)
    for row, line in zip(shown, table, strict=True):
        if has_problem(row):
            style = RED if row.counts["fail"] or row.counts["xpass"] else YELLOW
            lines.append(paint(">" + line[1:], style, colour))
        else:
            lines.append(line)
    return lines


def problem_lines(
    checks: Sequence[Check],
    expected: Mapping[str, str] = NO_EXPECTED,
    *,
    colour: bool = False,
    with_part: bool = True,
) -> list[str]:
    """``Problems (N)`` and each failing, warning or erroring check, or nothing."""
    problems = [
        check for check in checks if status_of(check, expected) in PROBLEM_STATUSES
    ]
    if not problems:
        return []
    lines = [f"Problems ({len(problems)})"]
    for check in problems:
        lines.extend(check_lines(check, expected, colour=colour, with_part=with_part))
    return lines


def verdict_line(status: int, verdict: str, *, colour: bool = False) -> str:
    """``Verdict: ...``, green when conformant, red when broken, else yellow."""
    return f"Verdict: {verdict_words(status, verdict, colour=colour)}"


def verdict_words(status: int, verdict: str, *, colour: bool = False) -> str:
    """The verdict's words painted as `verdict_line` paints them, for a tool
    whose verdict sits inside a line of its own (``reqfold check``)."""
    style = {CONFORMANT: GREEN, BROKEN: RED}.get(status, YELLOW)
    return paint(verdict, f"{BOLD};{style}", colour)


def kept_lines(folder: Path, logs: Sequence[Path], example: Path | None) -> list[str]:
    """What ``--keep`` kept and where, and how to look at one of them
    (`example`, a failing scenario's log when there is one): the log checks
    (``log/RULE``) are what ``reqfold check`` can explain; the others need
    the run."""
    if not logs:
        return [f"kept in {folder}: nothing (no scenario wrote a log)"]
    shown = example or logs[0]
    requests = shown.with_name(shown.name.removesuffix(".jsonl") + ".requests.jsonl")
    return [
        f"kept in {folder}: {count_text(len(logs), 'session log')}"
        " (SCENARIO.REVISION.jsonl), each with the requests the fake received"
        " for it (SCENARIO.REVISION.requests.jsonl)",
        f"  reqfold check {shlex.quote(str(shown))} --requests"
        f" {shlex.quote(str(requests))}",
        "  explains a log/RULE failure line by line; a scenario's other checks"
        " (calls/, absent/, request-N, cache/, anchor/, send-N/) are seen only"
        " by a run",
    ]


def count_text(count: int, noun: str) -> str:
    """``1 check``, ``2 checks``: a count with its noun agreeing."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


__all__ = [
    "PROBLEM_STATUSES",
    "check_lines",
    "check_mark",
    "colour_wanted",
    "count_text",
    "has_problem",
    "kept_lines",
    "paint",
    "problem_lines",
    "rule_lines",
    "verdict_line",
]

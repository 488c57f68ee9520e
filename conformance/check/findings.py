"""Findings: what the offline checker reports, one per broken rule occurrence.

A `Finding` names the docs/spec.md rule it shows broken, how serious it is
(``MUST``: the log fails; ``SHOULD``: a warning that ``--strict`` turns into
a failure), where it is (the 1-based line of the log file and, when the
line held a readable event, its seq), a one-line explanation, and what was
expected against what was found.

A finding's level is its rule's level (``MUST NOT`` counts as ``MUST``,
``SHOULD NOT`` as ``SHOULD``), except where a MUST rule names a SHOULD
clause of its own (``LOG-1``'s member order) or where the checker reports a
reader's duty rather than a writer's breach (a torn tail, ``JSONL-3``); the
code that raises such a finding passes the level explicitly.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import msgspec

from reqfold.conformance.rules import load_rules

MUST = "MUST"
SHOULD = "SHOULD"
ERROR = "ERROR"
"""Not a rule's level: the checker could not check a line (a bug in reqfold).

An error is no verdict on the log: it does not fail the check, but a check
with an error and no failing finding ends with "no verdict" (exit 3)."""

LEVELS = (MUST, SHOULD, ERROR)
NULL = "null"
"""How `render` shows JSON null (no other value renders to this text)."""


class _Absent:
    """The `expected`/`found` of a finding that has none (JSON null is `None`)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()


def level_of(rule: str) -> str:
    """The finding level of `rule`: MUST for MUST/MUST NOT, SHOULD otherwise.

    Raises KeyError for an ID docs/spec.md does not define, so a checker
    bug that invents a rule fails loudly in the tests.
    """
    return MUST if load_rules()[rule].is_must else SHOULD


@dataclass(frozen=True, slots=True, kw_only=True)
class Finding:
    """One broken rule at one place in a log."""

    rule: str
    level: str
    line: int
    seq: int | None
    message: str
    expected: str | None = None
    """The expected value as compact JSON text (``"null"`` for JSON null), or
    None when the finding states no expected value."""
    found: str | None = None
    """What was found, like `expected`."""
    path: str | None = None
    """The JSON path where a rebuilt request first differs from the one
    sent, when the finding compares the two (not part of its JSON form)."""

    def fails(self, *, strict: bool = False) -> bool:
        """True when this finding makes the check fail (SHOULD only if `strict`).

        A checker error never fails the check: it is no verdict.
        """
        return self.level == MUST or (strict and self.level == SHOULD)

    def dump(self) -> dict[str, Any]:
        """The JSON form used by ``--format json`` (members in a fixed order)."""
        out: dict[str, Any] = {
            "rule": self.rule,
            "level": self.level,
            "line": self.line,
            "seq": self.seq,
            "message": self.message,
        }
        # JSON null is null here, not the text "null": absence stays absence
        if self.expected is not None:
            out["expected"] = None if self.expected == NULL else self.expected
        if self.found is not None:
            out["found"] = None if self.found == NULL else self.found
        return out


def finding(
    rule: str,
    line: int,
    seq: int | None,
    message: str,
    *,
    expected: Any = ABSENT,
    found: Any = ABSENT,
    level: str | None = None,
    path: str | None = None,
) -> Finding:
    """Build a finding; `expected`/`found` values are rendered short (`render`).

    Leave `expected` or `found` out (`ABSENT`) when the finding has none;
    `None` is the JSON value null, shown as ``null``.
    """
    return Finding(
        rule=rule,
        level=level if level is not None else level_of(rule),
        line=line,
        seq=seq,
        message=message,
        expected=None if expected is ABSENT else render(expected),
        found=None if found is ABSENT else render(found),
        path=path,
    )


class Text(str):
    """A value `render` shows as it is, without JSON quoting."""

    __slots__ = ()


MISSING = Text("<absent>")
"""Shown where a member the finding is about is absent (not null)."""


def render(value: Any, limit: int = 160) -> str:
    """Compact JSON text of `value`, cut to `limit` characters.

    `Text` values are shown verbatim. Values too deep for the serializer
    are shown as ``<a value nested too deep to show>``.
    """
    if isinstance(value, Text):
        text = str(value)
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        except RecursionError:
            text = "<a value nested too deep to show>"
        except (TypeError, ValueError):
            # members left undecoded (msgspec.Raw) are shown as they were
            try:
                text = msgspec.json.encode(value).decode("utf-8", "replace")
            except (TypeError, ValueError):
                text = repr(value)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return text

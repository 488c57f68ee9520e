"""Expected breaks declared in a file: ``--expect-breaks FILE`` (pure).

One JSON object a line, ``{"index": N, "why": "..."}`` (``why`` optional),
blank lines skipped: the requests where a break is expected (a compaction,
a model switch, a ``/clear`` the user drove), as ``--expect-break`` says
them one by one, for a session with many. A bad line is named by its
number, never half-read.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

DEFAULT_WHY = "declared in --expect-breaks"
MEMBERS = frozenset({"index", "why"})


class DeclarationError(ValueError):
    """A declaration line that is not ``{"index": N, "why": "..."}``."""


def read_expected_breaks(lines: Iterable[str]) -> dict[int, str]:
    """Request index -> why a break there is expected, from the file's lines."""
    declared: dict[int, str] = {}
    first_line: dict[int, int] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        index, why = _declaration(line, number)
        if index in first_line:
            raise DeclarationError(
                f"line {number}: index {index} declared twice"
                f" (first on line {first_line[index]})"
            )
        first_line[index] = number
        declared[index] = why
    return declared


def _declaration(line: str, number: int) -> tuple[int, str]:
    try:
        value = json.loads(line)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise DeclarationError(f"line {number}: not a JSON object")
    unknown = sorted(set(value) - MEMBERS)
    if unknown:
        names = ", ".join(f'"{name}"' for name in unknown)
        raise DeclarationError(f"line {number}: unknown member(s) {names}")
    index = value.get("index")
    if not isinstance(index, int) or isinstance(index, bool) or index < 0:
        raise DeclarationError(
            f'line {number}: "index" must be a whole number, 0 or more'
        )
    why = value.get("why", DEFAULT_WHY)
    if not isinstance(why, str):
        raise DeclarationError(f'line {number}: "why" must be a string')
    return index, why or DEFAULT_WHY

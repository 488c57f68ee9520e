"""Telling a session log from the other files a user may hand ``reqfold
check`` by mistake: a capture of requests, a JSON run report, Markdown.

Such a file once got a finding per line (59,632 MUST findings for a big
capture); it now gets one line saying what it is, and, for a capture,
"did you mean --requests?". Only a file none of whose first lines could be
a log event is refused: a log a harness damaged is still checked and
fails on the rules it breaks, and so does text or bytes of no kind named
here. Pure: the first lines in, a reason or None.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

SNIFFED_LINES = 8
"""Non-empty lines looked at from the top of the file."""

SNIFFED_BYTES = 1 << 16
"""Bytes of each line looked at (a longer line is cut there)."""

CAPTURE_KEYS = frozenset({"method", "path", "status", "headers"})
"""The members every captured request has (``GET /_fake/requests.jsonl``)."""


def _parsed(line: bytes) -> object:
    try:
        return json.loads(line)
    except (ValueError, RecursionError):  # cut, damaged, too deep, or no JSON
        return None


def not_a_log(first_lines: Iterable[bytes], *, requests_given: bool) -> str | None:
    """Why the file that starts with `first_lines` is not a session log, in
    words to follow ``not a session log: ``, or None when it may be one.

    A line that is a JSON object with a string ``type`` (the envelope of
    every log line) makes it a log, whatever the other lines hold.
    """
    lines = [line.strip() for line in first_lines if line.strip()]
    if not lines:
        return None  # an empty file: the checker says what a log must hold
    values = [_parsed(line) for line in lines]
    objects = [value for value in values if isinstance(value, dict)]
    if any(isinstance(value.get("type"), str) for value in objects):
        return None
    if objects and all(value.keys() >= CAPTURE_KEYS for value in objects):
        hint = (
            " (are the log and the capture given the other way round?)"
            if requests_given
            else " (did you mean --requests?)"
        )
        return f"it is a capture of requests{hint}"
    if any(value.get("format") == "reqfold-run/1" for value in objects) or (
        lines[0] == b"{" and b'"format": "reqfold-run/1"' in b"".join(lines)
    ):
        return "it is a reqfold run report (reqfold compare reads those)"
    maybe_json = any(
        value is not None or (line.startswith(b"{") and line != b"{")
        for line, value in zip(lines, values, strict=True)
    )
    if maybe_json:
        # JSON lines of some kind, or a damaged or cut one: the checker
        # names what is wrong with each
        return None
    if lines[0] in (b"{", b"["):
        return "it is one JSON document, not one JSON value per line"
    head = lines[0].lower()
    if head.startswith((b"# ", b"## ")):
        return "none of its first lines is JSON (it looks like Markdown)"
    if head.startswith((b"<!doctype", b"<html", b"<?xml")):
        return "none of its first lines is JSON (it looks like HTML or XML)"
    # Text or bytes of no known kind: maybe a log a harness garbled, so the
    # checker judges it line by line.
    return None

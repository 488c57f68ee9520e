"""One wording for a line that is not JSON, whichever reader met it.

The checker's log reader, its capture reader and the cache judgement's
capture reader (msgspec) each meet damaged lines; a user who gives the same
line to each must read the same words: the parser's reason in lower case
and the 1-based character of the line (its terminator left out) where the
text stops being JSON, or the 1-based byte where it stops being UTF-8.
"""

from __future__ import annotations

import json


def at_character(reason: str, position: int) -> str:
    """``REASON at character N``: `position` counts from 0, N from 1."""
    return f"{reason} at character {position + 1}"


def decode_error_text(error: json.JSONDecodeError) -> str:
    """A stdlib decode error in the shared words (never its line/column)."""
    return at_character(error.msg.lower(), error.pos)


def line_damage(raw: bytes) -> str | None:
    """Why the line `raw` (its ``\\n`` or ``\\r\\n`` may end it) is not JSON
    text, in the shared words; None when it is."""
    body = raw.removesuffix(b"\n").removesuffix(b"\r")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as error:
        return f"invalid UTF-8 at byte {error.start + 1}"
    try:
        json.loads(text)
    except json.JSONDecodeError as error:
        return decode_error_text(error)
    except RecursionError:
        return None  # nested too deep for this parser, not damaged
    return None

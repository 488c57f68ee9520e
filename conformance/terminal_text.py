"""Text from an implementation under test, made safe to print.

An adapter's or a harness's output (its stderr tail, what it printed) is
shown on the user's terminal and copied into reports. Control characters
in it (escape sequences that set a terminal's title or clear its screen,
NUL, a bell) must not act there: `printable` shows each as its escape.
"""

from __future__ import annotations


def printable(text: str) -> str:
    """`text` with every control character but newline and tab shown as its
    Python escape (``\\x1b``, ``\\x07``), so it cannot act on a terminal."""
    if text.isprintable():
        return text
    return "".join(
        char if char in "\n\t" or char.isprintable() else repr(char)[1:-1]
        for char in text
    )

"""Text from an implementation under test, made safe to print.

An adapter's or a harness's output (its stderr tail, what it printed, an
error message, its name and version) is shown on the user's terminal and
copied into reports. Control characters in it (escape sequences that set a
terminal's title or clear its screen, NUL, a bell, a C1 ``CSI``) must not
act there: `printable` shows each as its escape, and `EscapingStream` does
so for everything a command prints, so no path an implementation's text
takes to the terminal is left out.
"""

from __future__ import annotations

from typing import Any, TextIO

SUITE_STYLES = ("0", "1", "31", "32", "33", "35", "1;31", "1;32", "1;33", "1;35")
"""The SGR styles the suite colours its own output with (`summary.paint`)."""

SUITE_SEQUENCES = ("\r\x1b[K", *(f"\x1b[{style}m" for style in SUITE_STYLES))
"""Control sequences the suite itself writes (the progress bar's "back to the
start of the line, and erase it", and its colours): passed through by
`EscapingStream`. A colour an implementation prints passes too; it can
neither move the cursor nor clear the screen nor set a title."""


def _escape(char: str) -> str:
    """A JSON-compatible escape where one exists (``\\u009b`` for a C1
    control, which JSON printed on the terminal may hold raw), else Python's
    (``\\x1b``: JSON text never holds a raw C0 control)."""
    if "\x7f" <= char <= "\x9f":
        return f"\\u{ord(char):04x}"
    return repr(char)[1:-1]


def printable(text: str) -> str:
    """`text` with every control character but newline and tab shown as its
    escape (``\\x1b``, ``\\x07``, ``\\u009b``), so it cannot act on a terminal."""
    if text.isprintable():
        return text
    return "".join(
        char if char in "\n\t" or char.isprintable() else _escape(char) for char in text
    )


class EscapingStream:
    """A text stream that writes `printable` text to `inner`.

    Everything else (``fileno``, ``isatty``, ``buffer``, ``encoding``) is
    `inner`'s, so the stream stands in for ``sys.stdout`` or ``sys.stderr``.
    Only the suite's own sequences (`SUITE_SEQUENCES`) pass unescaped.
    """

    def __init__(self, inner: TextIO) -> None:
        self.inner = inner

    def write(self, text: str) -> int:
        if text.isprintable():
            self.inner.write(text)
            return len(text)
        pieces = [text]
        for sequence in SUITE_SEQUENCES:
            pieces = [part for piece in pieces for part in _split_keep(piece, sequence)]
        self.inner.write(
            "".join(
                piece if piece in SUITE_SEQUENCES else printable(piece)
                for piece in pieces
            )
        )
        return len(text)

    def flush(self) -> None:
        self.inner.flush()

    def isatty(self) -> bool:
        return self.inner.isatty()

    def fileno(self) -> int:
        return self.inner.fileno()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def _split_keep(text: str, separator: str) -> list[str]:
    """`text` split at `separator`, the separators kept as pieces."""
    parts = text.split(separator)
    pieces = [parts[0]]
    for part in parts[1:]:
        pieces += [separator, part]
    return [piece for piece in pieces if piece]

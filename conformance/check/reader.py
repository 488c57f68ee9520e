"""The lines of a session file, numbered, joined and decoded for the rules.

Implements the reading half of the checker's fast path (docs/checker.md,
"Speed and memory"). `LineReader` takes the lines of a file (bytes, each
ending in ``\\n`` except perhaps the last; a long line may come in pieces,
joined here in place into one bytearray, so no line is held twice) and
yields each line with its number and its envelope as msgspec decodes it
(None when msgspec refuses the line or it ends without a newline, a
torn or unterminated last line: the rules then read it strictly).

Theory of operation. Most lines of a real log are ``assistant/chunk``
events of a step that already responded, which no rule reads beyond the
envelope. While the driver says such a chunk may come (`expected` is the
seq it would carry), the reader passes over every line that is one (the
next seq, the type, neither ``surfaceOp`` nor ``sourceEventSeqs``, ``data``
an object as the line's last member, valid UTF-8) without yielding it; it
counts them in `skipped` and moves `expected` on. The driver reads
`expected` back when a line is yielded and sets it again after handling it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import msgspec

from reqfold.conformance.check.lines import (
    EVENT_DECODER,
    LONG_INTEGER,
    Envelope,
    Line,
    has_long_integer,
    is_utf8,
)

CHUNK = "assistant/chunk"
DECODE_ERRORS = (msgspec.DecodeError, msgspec.ValidationError, RecursionError)

ReadLine = tuple[int, Line, Envelope | None]
"""A line's 1-based number, its bytes and its envelope (None: not decoded, or
the line does not end in a newline)."""


class LineReader:
    """Yields the lines the rules must see; passes over the chunks they need not.

    Args:
        lines: the lines of one session file.
    """

    def __init__(self, lines: Iterable[Line]) -> None:
        self._lines = iter(lines)
        self.expected: int | None = None
        """The seq of a chunk the reader may pass over, or None (none may)."""
        self.skipped = 0
        """Lines passed over (each held one event)."""
        self.lines = 0
        """Lines read, once the iteration is over (the last may be one passed over)."""

    def first(self) -> Line | None:
        """The first line, whole (None for an empty file); read it before iterating."""
        first = next(self._lines, None)
        if first is not None and not first.endswith(b"\n"):
            first = rest_of_line(first, self._lines)
        self.lines = 0 if first is None else 1
        return first

    def __iter__(self) -> Iterator[ReadLine]:
        it = self._lines
        decode = EVENT_DECODER.decode
        skipped = 0
        expected = start = self.expected
        before = self.lines  # lines read before this iteration
        yielded = 0
        # the pieces of a long line are taken from `it` itself, not counted;
        # a line's number is counted from the lines passed over and yielded;
        # those passed over are counted by run (`expected` moved from `start`)
        for raw in it:
            event: Envelope | None
            try:
                event = decoded = decode(raw)
            except DECODE_ERRORS:
                event = None
            else:
                # neither surfaceOp nor sourceEventSeqs: both still the UNSET
                # default, hence the same object; time >= 0 msgspec checked
                if (
                    decoded.seq == expected
                    and decoded.type == CHUNK
                    and decoded.surfaceOp is decoded.sourceEventSeqs
                    and raw[-3:] == b"}}\n"
                    and (raw.isascii() or is_utf8(raw))
                    and (len(raw) < LONG_INTEGER or not has_long_integer(raw))
                ):
                    expected += 1
                    continue
            if raw[-1:] != b"\n":  # a long line may come in pieces
                raw = rest_of_line(raw, it)
                try:  # no envelope unless it is whole now (not the last line, torn)
                    event = decode(raw) if raw[-1:] == b"\n" else None
                except DECODE_ERRORS:
                    event = None
            if expected is not None and start is not None:
                skipped += expected - start
            yielded += 1
            self.expected, self.skipped = expected, skipped
            yield before + skipped + yielded, raw, event
            expected = start = self.expected
        if expected is not None and start is not None:
            skipped += expected - start
        self.expected, self.skipped = expected, skipped
        self.lines = before + skipped + yielded


def rest_of_line(first: Line, pieces: Iterator[Line]) -> Line:
    """The line `first` begins, joined with the pieces that follow it up to
    its newline (a reader may give a long line in pieces, so no line is ever
    held twice); `first` itself when nothing follows (the last line)."""
    piece = next(pieces, None)
    if piece is None:
        return first
    line = bytearray(first)
    line += piece
    while not piece.endswith(b"\n"):
        piece = next(pieces, None)
        if piece is None:
            break
        line += piece
    return line

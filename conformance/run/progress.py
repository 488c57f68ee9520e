"""A progress bar on stderr while ``reqfold run`` works, when stderr is a terminal.

`progress_line` is pure (counts in, one line out); `Progress` draws it on
a stream, redrawing at most every `INTERVAL` seconds, and clears it before
anything else is printed, so the problem lines on stdout stay whole. It
draws nothing when the stream is not a terminal or the run is ``--quiet``:
logs in CI stay free of carriage returns.
"""

from __future__ import annotations

import contextlib
import io
import os
import time
from typing import TextIO

INTERVAL = 0.1
"""Least seconds between two redraws."""

WIDTH = 24
"""Cells of the bar itself."""

CLEAR = "\r\x1b[K"
"""Back to the start of the line, and erase it."""


def progress_line(
    part: str,
    done: int,
    total: int,
    problems: int,
    *,
    step: tuple[int, int] | None = None,
    columns: int | None = None,
) -> str:
    """``[#####.....]  45%  vectors 123/456 (part 1 of 3)  2 problems``.

    `step` is (this part's number, how many parts the run has), so the
    overall progress shows though the bar restarts with each part; with
    `columns` (the terminal's width) the line is cut to fit one line less a
    cell, since a line that wraps cannot be erased and would stay behind.
    """
    fraction = min(done / total, 1.0) if total > 0 else 0.0
    filled = round(fraction * WIDTH)
    bar = "#" * filled + "." * (WIDTH - filled)
    line = f"[{bar}] {fraction:>4.0%}  {part} {done}/{total}"
    if step is not None and step[1] > 1:
        line += f" (part {step[0]} of {step[1]})"
    if problems:
        line += f"  {problems} problem{'s' if problems != 1 else ''}"
    if columns is not None and len(line) >= columns:
        line = line[: max(columns - 1, 0)]
    return line


class Progress:
    """The bar of one run, drawn on `stream` when `enabled` (module docstring)."""

    def __init__(self, stream: TextIO, *, enabled: bool) -> None:
        self.stream = stream
        self.enabled = enabled
        self.part = ""
        self.done = 0
        self.total = 0
        self.problems = 0
        self.parts = 0
        """How many parts the run will start (0: unknown)."""
        self.started_parts = 0
        self._shown = False
        self._last = 0.0

    def start(self, part: str, total: int) -> None:
        """A part begins, with `total` items to go."""
        self.part, self.done, self.total = part, 0, total
        self.started_parts += 1
        self.draw(force=True)

    def advance(self, *, problem: bool = False) -> None:
        """One item of the part is done."""
        self.done += 1
        self.problems += problem
        self.draw(force=self.done >= self.total)

    def draw(self, *, force: bool = False) -> None:
        """Redraw the bar, unless it was drawn less than `INTERVAL` ago."""
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self._last < INTERVAL:
            return
        self._last = now
        step = (self.started_parts, self.parts) if self.parts else None
        line = progress_line(
            self.part,
            self.done,
            self.total,
            self.problems,
            step=step,
            columns=self._columns(),
        )
        self._write(CLEAR + line)
        self._shown = True

    def clear(self) -> None:
        """Erase the bar (before other output, and at the end)."""
        if self._shown:
            self._write(CLEAR)
            self._shown = False

    def _columns(self) -> int | None:
        """The terminal's width, or None when the stream has no terminal (or
        one that gives no size: a fresh pseudo-terminal says 0)."""
        try:
            columns = os.get_terminal_size(self.stream.fileno()).columns
        except (AttributeError, ValueError, OSError, io.UnsupportedOperation):
            return None
        return columns if columns > 0 else None

    def _write(self, text: str) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.stream.write(text)
            self.stream.flush()

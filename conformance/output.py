"""Standard output a reader may leave (``reqfold run ... | head -1``).

A closed stdout says nothing about the implementation under test: the run
goes on, quietly, writes every report asked for and exits with its
verdict's status. What is left unread is dropped, and nothing fails at
exit either (the descriptor points at the null device from then on).
"""

from __future__ import annotations

import contextlib
import os
from typing import Any, TextIO


class ReaderMayLeave:
    """Wraps a text stream; once writing it breaks the pipe, drops the rest."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.gone = False
        """The reader left: nothing more is written."""

    def write(self, text: str) -> int:
        if not self.gone:
            try:
                self.stream.write(text)
            except BrokenPipeError:
                self._leave()
        return len(text)

    def flush(self) -> None:
        if not self.gone:
            try:
                self.stream.flush()
            except BrokenPipeError:
                self._leave()

    def _leave(self) -> None:
        self.gone = True
        with contextlib.suppress(OSError, ValueError, AttributeError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self.stream.fileno())
            os.close(devnull)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)

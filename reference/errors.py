"""Errors raised by the reference codec, session log and persistence.

Every error names the spec rule it enforces (``rule``, a docs/spec.md ID)
and, where a log is involved, where it happened (``seq`` and/or ``line``)::

    CodecError(ValueError)        root; .rule, .seq, .line
      NotJsonValue                a value is not a JSON value (JSON-1)
      MalformedHeader             a header or config has the wrong shape (HDR-*, ...)
      MalformedDelta              a delta has the wrong shape (DELTA-1, SYS-3, ...)
      DeltaConflict               a delta does not apply to its base (SYS-5, TOOLS-5)
      DeltaBeforeSnapshot         a delta came before any snapshot (FOLD-2)
      MalformedEvent              an event breaks the envelope rules (LOG-*, SNAP-1)
      SurfaceError                a surface op is invalid (SURF-*)
    PersistenceError(Exception)   root for JSONL files; .line
      LogDamaged                  a line other than the last is damaged (JSONL-4)
      TornTail                    the file ends in a partial line (JSONL-3)
"""

from __future__ import annotations


class CodecError(ValueError):
    """A value or log breaks a rule of docs/spec.md."""

    def __init__(
        self,
        message: str,
        *,
        rule: str | None = None,
        seq: int | None = None,
        line: int | None = None,
    ) -> None:
        self.rule = rule
        self.seq = seq
        self.line = line
        where = []
        if line is not None:
            where.append(f"line {line}")
        if seq is not None:
            where.append(f"seq {seq}")
        prefix = f"[{rule}] " if rule else ""
        suffix = f" ({', '.join(where)})" if where else ""
        self.detail = message
        super().__init__(f"{prefix}{message}{suffix}")

    @property
    def kind(self) -> str:
        """A stable machine-readable name for the error (adapter protocol)."""
        name = type(self).__name__
        return "".join("-" + c.lower() if c.isupper() else c for c in name).lstrip("-")


class NotJsonValue(CodecError):
    """A value is not a JSON value (NaN, a tuple, a non-string key, a cycle...)."""


class MalformedHeader(CodecError):
    """A header, config or tool list has the wrong shape."""


class MalformedDelta(CodecError):
    """A header delta has the wrong shape."""


class DeltaConflict(CodecError):
    """A well-formed delta does not apply to the header it follows."""


class DeltaBeforeSnapshot(CodecError):
    """A `request/header-delta` appears before any `request/header` snapshot."""


class MalformedEvent(CodecError):
    """An event breaks the log envelope rules."""


class SurfaceError(CodecError):
    """A surface operation names nodes that are not on the surface."""


class PersistenceError(Exception):
    """A JSONL session file cannot be read or written as asked."""

    def __init__(self, message: str, *, path: str, line: int | None = None) -> None:
        self.path = path
        self.line = line
        self.detail = message
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {message}")


class LogDamaged(PersistenceError):
    """A line before the last one is not a valid event: data would be lost."""


class TornTail(PersistenceError):
    """The file ends in a partial line, the trace of a crash mid-write."""

"""Which revision a log that declares none was written under (issue 10, item 13).

A session file names its revision on the storage line (JSONL-1, optional
``revision``). Real logs often do not, and reading a ``request-messages``
log as ``session-prefix`` (the default) turns every header event into a
misleading HDR-2 or PREFIX-2 finding. The header events say more than the
storage line: each revision has its own header fields and delta arms
(`reqfold.reference.revisions.Revision`), so

* a ``messageSuffix`` anywhere (snapshot field or delta arm) exists only in
  ``request-messages``;
* a ``messagePrefix`` delta arm exists only in ``request-messages``
  (``session-prefix`` forbids it, PREFIX-2; ``header-events`` has no prefix);
* a ``messagePrefix`` on a snapshot fits ``request-messages`` and
  ``session-prefix``;
* no message field at all fits every revision.

`RevisionEvidence` takes the header events one by one, as the checker
meets them in its single pass over the log (issue 31: a log that declares
no revision costs what one that declares it costs), and says the revision
to read the log under, every revision that fits, and the line that decided.
When more than one fits, the default (`LATEST`, ``session-prefix``) is
taken among them and the report says which others fit. `infer_revision`
does the same over a log's lines on its own (``reqfold probe``, which has
the log in memory). Pure: events or lines in, a value out.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from reqfold.reference.header import DELTA, SNAPSHOT
from reqfold.reference.revisions import ALL_REVISIONS, LATEST, Revision

_MARKERS = (b"messagePrefix", b"messageSuffix")
"""A line without either name carries no evidence and is not decoded."""


@dataclass(frozen=True, slots=True)
class Inference:
    """The revision a log is read under when its storage line names none."""

    revision: Revision
    fitting: tuple[Revision, ...]
    """Every revision the header events fit, in `ALL_REVISIONS` order."""
    line: int | None
    """The 1-based line of the evidence, None when no header event told."""
    evidence: str
    """What on that line decided, in a few words."""

    @property
    def ambiguous(self) -> bool:
        """More than one revision fits: the default was taken among them."""
        return len(self.fitting) > 1

    def describe(self) -> str:
        """The source of the revision, as the report prints it."""
        if not self.ambiguous:
            return f"inferred from line {self.line}: {self.evidence}"
        if self.line is None:
            return "default; not declared, and every revision fits"
        fits = " and ".join(r.value for r in self.fitting)
        return (
            f"default; not declared, and {fits} fit (line {self.line}: {self.evidence})"
        )


class RevisionRuledOut(Exception):
    """A header event ruled out the revision a single-pass check was reading
    the log under, after judgements that depend on it: the log must be
    checked again under `inference.revision` (``reqfold check`` does)."""

    def __init__(self, inference: Inference) -> None:
        super().__init__(f"the log must be read as {inference.revision.value}")
        self.inference = inference


def declared_revision(first_line: bytes) -> str | None:
    """The storage line's ``revision`` member, or None when it has none."""
    try:
        value = json.loads(first_line)
    except (ValueError, RecursionError):
        return None
    if isinstance(value, dict) and isinstance(value.get("revision"), str):
        return str(value["revision"])
    return None


def header_evidence(kind: str, data: Any) -> tuple[tuple[Revision, ...], str] | None:
    """What one header event (its type and decoded ``data``) says about the
    revision, or None when nothing."""
    if not isinstance(data, dict):
        return None
    if kind == DELTA:
        fields = data
        what = "a header delta carries"
    elif kind == SNAPSHOT and isinstance(data.get("header"), dict):
        fields = data["header"]
        what = "a header snapshot carries"
    else:
        return None
    if "messageSuffix" in fields:
        return (Revision.REQUEST_MESSAGES,), f"{what} messageSuffix"
    if "messagePrefix" in fields:
        if fields is data:
            return (Revision.REQUEST_MESSAGES,), f"{what} a messagePrefix arm"
        return (
            (Revision.REQUEST_MESSAGES, Revision.SESSION_PREFIX),
            f"{what} messagePrefix",
        )
    return None


class RevisionEvidence:
    """The revisions the header events read so far fit, narrowed event by event.

    Evidence that contradicts what came before, or says nothing new, is
    passed over: the first event that narrows the revisions decides.
    """

    __slots__ = ("evidence", "fitting", "line")

    def __init__(self) -> None:
        self.fitting: tuple[Revision, ...] = ALL_REVISIONS
        self.line: int | None = None
        self.evidence = "no header event names a message field"

    @property
    def settled(self) -> bool:
        """One revision fits: nothing later can change the inference."""
        return len(self.fitting) == 1

    def header_event(self, kind: str, data: Any, line: int) -> bool:
        """Take one header event at `line`; whether it narrowed the revisions."""
        found = header_evidence(kind, data)
        if found is None:
            return False
        revisions, what = found
        narrowed = tuple(r for r in self.fitting if r in revisions)
        if not narrowed or narrowed == self.fitting:
            return False
        self.fitting, self.line, self.evidence = narrowed, line, what
        return True

    def inference(self) -> Inference:
        """The revision to read the log under, as the evidence stands."""
        fitting = self.fitting
        revision = LATEST if LATEST in fitting else fitting[0]
        return Inference(
            revision=revision, fitting=fitting, line=self.line, evidence=self.evidence
        )


def _evidence_line(raw: bytes) -> tuple[str, Any] | None:
    """The type and data of a line that may be a header event naming a
    message field, or None (a line naming neither is not decoded)."""
    if not any(marker in raw for marker in _MARKERS):
        return None
    try:
        event = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(event, dict) or not isinstance(event.get("type"), str):
        return None
    return event["type"], event.get("data")


def infer_revision(lines: Iterable[bytes]) -> Inference | None:
    """Infer the revision of a session file; None when its storage line names one.

    `lines` are the file's lines, or pieces of them (``readline(limit)``):
    a line that comes in more than one piece is not read, so memory stays
    bounded by the piece size. Reads until the evidence is decisive (one
    revision fits) or the lines end. Only lines that mention a message
    field are decoded, so a scan costs little more than reading the file.
    """
    evidence = RevisionEvidence()
    number = 0
    fresh = True  # the next piece starts a line
    for raw in lines:
        whole = fresh and raw.endswith(b"\n")
        if fresh:
            number += 1
        fresh = raw.endswith(b"\n")
        if not whole:
            continue  # a piece of a long line (or a torn last line): no evidence
        if number == 1:
            if declared_revision(raw) is not None:
                return None
            continue
        found = _evidence_line(raw)
        narrowed = found is not None and evidence.header_event(*found, number)
        if narrowed and evidence.settled:
            break
    return evidence.inference()

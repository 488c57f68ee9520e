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

`infer_revision` reads the lines once and returns the revision to read the
log under, every revision that fits, and the line that decided. When more
than one fits, the default (`LATEST`, ``session-prefix``) is taken among
them and the report says which others fit. Pure: lines in, a value out.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

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


def declared_revision(first_line: bytes) -> str | None:
    """The storage line's ``revision`` member, or None when it has none."""
    try:
        value = json.loads(first_line)
    except (ValueError, RecursionError):
        return None
    if isinstance(value, dict) and isinstance(value.get("revision"), str):
        return str(value["revision"])
    return None


def _evidence(raw: bytes) -> tuple[tuple[Revision, ...], str] | None:
    """What one line says about the revision, or None when nothing."""
    if not any(marker in raw for marker in _MARKERS):
        return None
    try:
        event = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(event, dict) or not isinstance(event.get("data"), dict):
        return None
    data = event["data"]
    if event.get("type") == DELTA:
        fields = data
        what = "a header delta carries"
    elif event.get("type") == SNAPSHOT and isinstance(data.get("header"), dict):
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


def infer_revision(lines: Iterable[bytes]) -> Inference | None:
    """Infer the revision of a session file; None when its storage line names one.

    `lines` are the file's lines, or pieces of them (``readline(limit)``):
    a line that comes in more than one piece is not read, so memory stays
    bounded by the piece size. Reads until the evidence is decisive (one
    revision fits) or the lines end. Only lines that mention a message
    field are decoded, so a scan costs little more than reading the file.
    """
    fitting: tuple[Revision, ...] = ALL_REVISIONS
    line: int | None = None
    evidence = "no header event names a message field"
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
        found = _evidence(raw)
        if found is None:
            continue
        revisions, what = found
        narrowed = tuple(r for r in fitting if r in revisions)
        if not narrowed or narrowed == fitting:
            continue  # contradicts what came before, or says nothing new
        fitting, line, evidence = narrowed, number, what
        if len(fitting) == 1:
            break
    revision = LATEST if LATEST in fitting else fitting[0]
    return Inference(revision=revision, fitting=fitting, line=line, evidence=evidence)

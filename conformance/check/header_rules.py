"""The header fold and the writer contract, checked one header event at a time.

Implements the log-visible part of docs/spec.md sections "Header", "Deltas",
"Fold", "Writer" and "Session prefix": FOLD-2, SNAP-1, HDR-* (through the
reference's `canonical_header`), WRITER-1 .. WRITER-6 and PREFIX-2.

Theory of operation. `HeaderFold` holds the header in force (the
*baseline*, canonical) exactly as `reference.header.fold_step` computes it,
and judges each header event against it with the reference algebra: a
snapshot must hold a canonical header and a reason the log's history allows;
a delta must apply, change something, and be byte for byte the delta
`diff_header` would have produced for the header it yields; a ``fallback``
must be a change no delta expresses. A header event that cannot be folded
makes the header *unknown* until the next good snapshot: later deltas are not
judged (the baseline they apply to is lost), so one bad event yields one
finding, not a cascade.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from conformance.check.findings import SHOULD, Finding, finding
from conformance.codec.judge_equal import same_json
from reference.errors import CodecError, DeltaBeforeSnapshot
from reference.header import (
    SNAPSHOT_REASONS,
    Delta,
    Header,
    apply_to_canonical,
    canonical_header,
    diff_canonical,
    project_canonical,
)
from reference.revisions import Revision


class _Config(msgspec.Struct):
    model: str
    temperature: float | UnsetType = UNSET
    maxTokens: int | UnsetType = UNSET
    stop: list[str] | UnsetType = UNSET


class _Tool(msgspec.Struct):
    name: str


class _Message(msgspec.Struct):
    role: str
    content: list[Any]


class _HeaderEvents(msgspec.Struct, forbid_unknown_fields=True):
    config: _Config
    system: str | UnsetType = UNSET
    tools: list[_Tool] | UnsetType = UNSET


class _SessionPrefix(_HeaderEvents, forbid_unknown_fields=True):
    messagePrefix: list[_Message] | UnsetType = UNSET


class _RequestMessages(_SessionPrefix, forbid_unknown_fields=True):
    messageSuffix: list[_Message] | UnsetType = UNSET


_SHAPES: dict[Revision, type[msgspec.Struct]] = {
    Revision.HEADER_EVENTS: _HeaderEvents,
    Revision.SESSION_PREFIX: _SessionPrefix,
    Revision.REQUEST_MESSAGES: _RequestMessages,
}


def fast_canonical(header: Any, revision: Revision) -> Header | None:
    """The canonical form of a well-formed decoded header, or None.

    A speed path for `reference.header.canonical_header`, whose full
    JSON-value walk costs milliseconds on a header with tens of tools and
    is redundant for values the checker decoded from JSON itself: the shape
    is checked by msgspec in C (HDR-1..HDR-3, CONFIG-1/2, SYS-1, TOOLS-1,
    MSGS-1), tool names for uniqueness (TOOLS-2). None means "not proven
    well-formed": the caller asks the reference, which names the rule.
    """
    if not isinstance(header, dict) or not isinstance(header.get("config"), dict):
        return None
    try:
        msgspec.convert(header, _SHAPES[revision])
    except (msgspec.ValidationError, UnicodeEncodeError):
        # a lone surrogate in a key cannot be encoded: the reference names it
        return None
    if any(value is None for value in header["config"].values()):
        return None
    tools = header.get("tools", [])
    if len({tool["name"] for tool in tools}) != len(tools):
        return None
    return project_canonical(header, revision)


class HeaderFold:
    """The header in force while a log is read, and the writer rules it implies.

    Args:
        revision: the revision header events are read under.
    """

    def __init__(self, revision: Revision) -> None:
        self.revision = revision
        self.state: Header | None = None
        self.unknown = False
        self.events_seen = 0

    def _error(self, error: CodecError, line: int, seq: int) -> Finding:
        self.state = None
        self.unknown = True
        return finding(error.rule or "FOLD-1", line, seq, error.detail)

    def snapshot(
        self, data: Any, *, line: int, seq: int, first_in_turn: bool
    ) -> list[Finding]:
        """Fold a ``request/header`` event (SNAP-1, WRITER-*, PREFIX-2)."""
        findings: list[Finding] = []
        came_before = self.events_seen > 0
        self.events_seen += 1
        if not isinstance(data, dict) or "header" not in data:
            self.state, self.unknown = None, True
            return [finding("SNAP-1", line, seq, "a snapshot's data needs a header")]
        reason = data.get("reason")
        extra = [key for key in data if key not in ("header", "reason")]
        if extra:
            findings.append(
                finding(
                    "SNAP-1",
                    line,
                    seq,
                    f"a snapshot's data is {{header, reason}}; it also has {extra}",
                )
            )
        if reason not in SNAPSHOT_REASONS:
            findings.append(
                finding(
                    "SNAP-1",
                    line,
                    seq,
                    "the snapshot reason must be initial, resume or fallback",
                    found=reason,
                )
            )
        header = data["header"]
        current = fast_canonical(header, self.revision)
        if current is None:
            try:
                current = canonical_header(header, self.revision)
            except CodecError as error:
                findings.append(self._error(error, line, seq))
                return findings
        findings.extend(self._canonical(header, current, line, seq))
        findings.extend(
            self._reason(reason, current, line, seq, came_before, first_in_turn)
        )
        self.state, self.unknown = current, False
        return findings

    def _canonical(
        self, header: Header, current: Header, line: int, seq: int
    ) -> list[Finding]:
        # canonical_header shares values with its input and only drops or
        # reorders members, so comparing member names decides canonicality.
        if list(header) == list(current):
            return []
        if set(header) == set(current):
            return [
                finding(
                    "HDR-5",
                    line,
                    seq,
                    "the snapshot's header members are not in canonical order"
                    " (config, system, tools, messagePrefix, messageSuffix)",
                    expected=list(current),
                    found=list(header),
                )
            ]
        dropped = [key for key in header if key not in current]
        return [
            finding(
                "WRITER-5",
                line,
                seq,
                f"the snapshot's header is not canonical (HDR-4): {dropped} are"
                " empty and must be absent",
                expected=current,
                found=header,
            )
        ]

    def _reason(
        self,
        reason: Any,
        current: Header,
        line: int,
        seq: int,
        came_before: bool,
        first_in_turn: bool,
    ) -> list[Finding]:
        if reason == "initial" and came_before:
            return [
                finding(
                    "WRITER-6",
                    line,
                    seq,
                    "an initial snapshot after an earlier header event; a new"
                    " instance logs resume, a change within one a delta or fallback",
                    expected="resume",
                    found=reason,
                )
            ]
        if reason in ("resume", "fallback") and not came_before:
            return [
                finding(
                    "WRITER-1" if reason == "fallback" else "WRITER-6",
                    line,
                    seq,
                    f"the log's first header event must be an initial snapshot,"
                    f" not {reason}",
                    expected="initial",
                    found=reason,
                )
            ]
        if reason == "resume" and not first_in_turn:
            return [
                finding(
                    "WRITER-6",
                    line,
                    seq,
                    "a resume snapshot must be the first header event of its turn"
                    " (an instance boundary); this turn already logged one",
                )
            ]
        if reason == "fallback" and self.state is not None and not self.unknown:
            return self._fallback(current, line, seq)
        return []

    def _fallback(self, current: Header, line: int, seq: int) -> list[Finding]:
        baseline = self.state
        assert baseline is not None
        findings: list[Finding] = []
        delta = diff_canonical(baseline, current, self.revision)
        if delta is None:
            findings.append(
                finding(
                    "WRITER-2",
                    line,
                    seq,
                    "a fallback snapshot of the header already in force; an"
                    " unchanged header logs nothing",
                )
            )
        elif self._round_trips(baseline, delta, current):
            findings.append(
                finding(
                    "WRITER-4",
                    line,
                    seq,
                    "a fallback snapshot where a delta round-trips; the writer"
                    " logs that delta",
                    expected=delta,
                    found="fallback snapshot",
                )
            )
        if self.revision is Revision.SESSION_PREFIX and not same_json(
            baseline.get("messagePrefix", []), current.get("messagePrefix", [])
        ):
            findings.append(
                finding(
                    "PREFIX-2",
                    line,
                    seq,
                    "a fallback snapshot changes the session prefix, which is"
                    " constant within an instance",
                    expected=baseline.get("messagePrefix", []),
                    found=current.get("messagePrefix", []),
                )
            )
        return findings

    def delta(self, data: Any, *, line: int, seq: int) -> list[Finding]:
        """Fold a ``request/header-delta`` event (FOLD-2, DELTA-*, WRITER-3/4)."""
        self.events_seen += 1
        if self.unknown:
            return []
        baseline = self.state
        if baseline is None:
            error = DeltaBeforeSnapshot(
                "request/header-delta comes before any request/header snapshot",
                rule="FOLD-2",
            )
            return [self._error(error, line, seq)]
        try:
            after = apply_to_canonical(baseline, data, self.revision)
        except CodecError as error:
            return [self._error(error, line, seq)]
        self.state = after
        findings: list[Finding] = []
        if self.revision is Revision.SESSION_PREFIX and "messagePrefix" in data:
            findings.append(
                finding(
                    "PREFIX-2",
                    line,
                    seq,
                    "a delta carries a messagePrefix arm; the session prefix"
                    " changes only on an instance's initial or resume snapshot",
                    found=data["messagePrefix"],
                )
            )
        expected = diff_canonical(baseline, after, self.revision)
        if expected is None:
            findings.append(
                finding(
                    "WRITER-3",
                    line,
                    seq,
                    "a no-op delta: applying it changes nothing, and an unchanged"
                    " header logs no event",
                    found=data,
                )
            )
        elif not self._round_trips(baseline, expected, after):
            findings.append(
                finding(
                    "WRITER-4",
                    line,
                    seq,
                    "no delta round-trips to this header; the writer logs a"
                    " fallback snapshot",
                    found=data,
                )
            )
        elif not same_json(data, expected):
            by_value = same_json(data, expected, ordered=False)
            findings.append(
                finding(
                    "WRITER-3",
                    line,
                    seq,
                    "the delta equals diff's by value but its members are in"
                    " another order (JSON-3)"
                    if by_value
                    else "the delta is not exactly what diff yields for the change"
                    " it makes (an arm for an unchanged part, or padding)",
                    expected=expected,
                    found=data,
                    level=SHOULD if by_value else None,
                )
            )
        return findings

    def _round_trips(self, baseline: Header, delta: Delta, after: Header) -> bool:
        try:
            again = apply_to_canonical(baseline, delta, self.revision)
        except CodecError:
            return False
        return list(again) == list(after) and all(
            same_json(again[name], after[name]) for name in after
        )

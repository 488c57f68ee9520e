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

from conformance.check.findings import MISSING, SHOULD, Finding, finding
from conformance.codec import judge_equal
from reference.errors import CodecError, DeltaBeforeSnapshot
from reference.header import (
    SNAPSHOT_REASONS,
    Delta,
    Header,
    apply_to_canonical,
    canonical_header,
    diff_canonical,
    diff_tools,
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
    JSON-value walk costs milliseconds on a header with tens of tools. The
    shape is checked by msgspec in C (HDR-1..HDR-3, CONFIG-1/2, SYS-1,
    TOOLS-1, MSGS-1), tool names for uniqueness (TOOLS-2), and JSON-1 by
    one msgspec encode (which refuses a lone surrogate in any string or key
    and writes a non-finite number as ``null``, so a header whose encoding
    holds ``null`` is left to the reference).

    Precondition: `header` is a value decoded from JSON text (object keys
    are strings, no tuples or cycles), as every header the checker folds is.
    Under it, the result is `canonical_header(header, revision)` or None,
    and None means "not proven well-formed": the caller asks the reference,
    which names the rule. The shapes are tied to `Revision.header_fields`
    by tests/conformance/test_check_writer_logs.py.
    """
    if not isinstance(header, dict) or not isinstance(header.get("config"), dict):
        return None
    try:
        msgspec.convert(header, _SHAPES[revision])
    except (msgspec.ValidationError, UnicodeEncodeError, RecursionError):
        return None
    if not proven_json(header):
        # a null member (HDR-3) or a non-finite number (JSON-1), or a null
        # inside a tool's schema, which is fine: the reference tells them apart
        return None
    tools = header.get("tools", [])
    if len({tool["name"] for tool in tools}) != len(tools):
        return None
    return project_canonical(header, revision)


_ENCODER = msgspec.json.Encoder()
_BEFORE_NULL = b":,["
"""What comes before a null token in compact JSON (or before text that looks
like one: then the reference is asked, which costs time, not exactness)."""


def proven_json(value: Any) -> bool:
    """True when one msgspec encode proves `value` a JSON value (JSON-1).

    Precondition: `value` was decoded from JSON text (object keys are
    strings, no tuples or cycles). What such a value may still hold that
    JSON-1 refuses is a lone surrogate (msgspec refuses to encode it) or a
    non-finite number (which the strict reader keeps and msgspec writes as
    ``null``), so an encoding without a null token proves it. False means
    "not proven" (a value holding ``null`` is usually fine): the caller
    asks the reference's walk, which names the rule.
    """
    try:
        encoded = _ENCODER.encode(value)
    except (UnicodeEncodeError, RecursionError):
        return False
    # a null token follows ":", "," or "[" (or starts the text); most
    # encodings hold no "null" at all, and the rest only a few
    at = encoded.find(b"null")
    while at != -1:
        if at == 0 or encoded[at - 1] in _BEFORE_NULL:
            return False
        at = encoded.find(b"null", at + 4)
    return True


def fold_equal(a: Any, b: Any, depth: int = 3) -> bool:
    """JSON-2 and JSON-3 equality, fast for the values a fold compares.

    Arrays are equal element by element, objects member by member (names
    in order), so the top `depth` levels are compared item by item and an
    item shared by both sides (a tool the change left alone) is equal
    without a look. Below that, values the fold holds are JSON values
    (finite numbers, no lone surrogate: the fast fold and the reference
    refuse others), so equal compact encodings mean equal values; encodings
    that differ may still be equal values (``1`` and ``1.0``), which the
    judge's own comparison (`conformance.codec.judge_equal`) then decides.
    """
    if a is b:
        return True
    if depth:
        if type(a) is list and type(b) is list:
            return len(a) == len(b) and all(
                fold_equal(x, y, depth - 1) for x, y in zip(a, b, strict=True)
            )
        if type(a) is dict and type(b) is dict:
            return list(a) == list(b) and all(
                fold_equal(a[name], b[name], depth - 1) for name in a
            )
    try:
        if _ENCODER.encode(a) == _ENCODER.encode(b):
            return True
    except (TypeError, ValueError, OverflowError, RecursionError):
        pass  # not encodable as it is (a lone surrogate): the walk decides
    return judge_equal.same_json(a, b)


def fold_diff(a: Header, b: Header, revision: Revision) -> Delta | None:
    """`reference.header.diff_canonical`, with the tools compared by `fold_equal`.

    The reference compares the two tool lists with `json_equal`, a walk of
    every schema, which is most of a delta's cost on a header with tens of
    tools; here the tools arm is the reference's `diff_tools` when
    `fold_equal` finds the lists differ, and every other arm is the
    reference's own. tests/conformance/test_check_writer_logs.py holds it
    equal to `diff_canonical`.
    """
    tools_a, tools_b = a.get("tools", []), b.get("tools", [])
    if fold_equal(tools_a, tools_b):
        return diff_canonical(a, {**b, "tools": tools_a} if tools_a else b, revision)
    shared = {**b, "tools": tools_a}
    rest = diff_canonical(a, shared, revision) or {}
    arms = {**rest, "tools": diff_tools(tools_a, tools_b)}
    return {arm: arms[arm] for arm in revision.delta_arms if arm in arms}


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
        reason = data.get("reason", MISSING)
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
        delta = fold_diff(baseline, current, self.revision)
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
        if self.revision is Revision.SESSION_PREFIX and not fold_equal(
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
            after = apply_to_canonical(
                baseline, data, self.revision, values_checked=proven_json(data)
            )
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
        expected = fold_diff(baseline, after, self.revision)
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
        elif fold_equal(data, expected):
            pass  # diff's own delta: it round-trips, as applying it just showed
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
        else:
            by_value = judge_equal.same_json(data, expected, ordered=False)
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
            fold_equal(again[name], after[name]) for name in after
        )

"""The header fold and the writer contract, checked one header event at a time.

Implements the log-visible part of docs/spec.md sections "Header", "Deltas",
"Fold", "Writer" and "Session prefix": FOLD-2, SNAP-1, HDR-* (through the
reference's `canonical_header`), WRITER-1 .. WRITER-6 and PREFIX-2.

Theory of operation. `HeaderFold` holds the header in force (the
*baseline*, canonical) exactly as `reqfold.reference.header.fold_step` computes it,
and judges each header event against it with the reference algebra: a
snapshot must hold a canonical header and a reason the log's history allows;
a delta must apply, change something, and be byte for byte the delta
`diff_header` would have produced for the header it yields; a ``fallback``
must be a change no delta expresses. A header event that cannot be folded
makes the header *unknown* until the next good snapshot: later deltas are not
judged (the baseline they apply to is lost), so one bad event yields one
finding, not a cascade.

Three fast paths skip the general path where its outcome is known: a delta
that is exactly the one diff yields for the change it makes (every delta a
conforming writer logs) is applied arm by arm and found clean
(`HeaderFold._folded`); a snapshot of the header in force, spelt as it
is, keeps it (`HeaderFold._in_force`); and the reader may know such a
snapshot by its undecoded bytes (`HeaderFold.known_snapshot`). Anything
else, or anything they cannot show, takes the general path, which names
the rule.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from reqfold.conformance.check.findings import MISSING, SHOULD, Finding, finding
from reqfold.conformance.json_text import judge_equal
from reqfold.reference.errors import CodecError, DeltaBeforeSnapshot, MalformedDelta
from reqfold.reference.header import (
    SNAPSHOT_REASONS,
    Delta,
    Header,
    apply_to_canonical,
    canonical_header,
    check_config,
    diff_canonical,
    diff_tools,
    project_canonical,
    system_lines,
)
from reqfold.reference.revisions import Revision


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

    A speed path for `reqfold.reference.header.canonical_header`, whose full
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
    return _clean_encoding(value) is not None


def encoding(value: Any) -> bytes | None:
    """`value`'s compact JSON encoding, members in order; None when msgspec
    cannot write it (a lone surrogate, nesting deeper than it allows)."""
    try:
        return _ENCODER.encode(value)
    except (UnicodeEncodeError, RecursionError):
        return None


def _clean_encoding(value: Any) -> bytes | None:
    """`encoding(value)` when it holds no null token (`null_free`), else None."""
    encoded = encoding(value)
    return encoded if encoded is not None and null_free(encoded) else None


ToolBytes = dict[int, tuple[Any, bytes | None]]
"""Tools and their `_clean_encoding`, by the tool's id (kept with the tool,
so the id is not reused while it is here)."""


def _tools_encoding(tools: Any, known: ToolBytes, kept: ToolBytes) -> bytes | None:
    """`_clean_encoding(tools)`, each tool's taken from `known` when there;
    every tool's goes to `kept`."""
    if type(tools) is not list:
        return _clean_encoding(tools)
    items: list[bytes] = []
    for tool in tools:
        entry = known.get(id(tool))
        if entry is None or entry[0] is not tool:
            entry = (tool, _clean_encoding(tool))
        kept[id(tool)] = entry
        if entry[1] is None:
            return None
        items.append(entry[1])
    return b"[" + b",".join(items) + b"]"


def null_free(encoded: bytes) -> bool:
    """Whether an encoding holds no null token: a value decoded from JSON
    text whose encoding has none holds only finite numbers (msgspec writes
    a non-finite one as ``null``)."""
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
    judge's own comparison (`reqfold.conformance.json_text.judge_equal`) then decides.
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
        fast: take the fast paths (`_folded`, `_in_force`,
            `known_snapshot`) where they apply;
            False judges every event the general way, the oracle they are
            tested against.
    """

    def __init__(self, revision: Revision, *, fast: bool = True) -> None:
        self.revision = revision
        self.fast = fast
        self.state: Header | None = None
        self.unknown = False
        self.events_seen = 0
        self._message_fields = revision.message_fields
        self._system: tuple[str | None, list[str]] = (None, [])
        """A system prompt and its lines (the one in force, mostly)."""
        self._names: tuple[list[Any] | None, dict[str, int]] = (None, {})
        """A tools list and the position of each name in it."""
        self._parts: dict[str, tuple[Any, bytes | None]] = {}
        """Parts of the header in force and their encodings (`_part`)."""
        self._tool_bytes: ToolBytes = {}
        """The tools of the header in force and their encodings (`_part`)."""

    def read_as(self, revision: Revision) -> None:
        """Read the next header events under `revision`.

        For revision inference in the checker's single pass: sound only while
        no header event folded so far named a message field, so the header in
        force (canonical: empty message fields absent) and every finding made
        are the same under either revision.
        """
        self.revision = revision
        self._message_fields = revision.message_fields

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
        current = self._in_force(header) if self.fast else None
        if current is None:
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
        if self.fast:
            folded = self._folded(baseline, data)
            if folded is not None:
                self.state = folded
                return []
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

    # ---------------------------------------------------------- fast paths

    def _in_force(self, header: Any) -> Header | None:
        """The header in force, when a snapshot's `header` is exactly it.

        Exactly: the same members in the same order, the same system prompt,
        and every other part encoded as the part in force is (`_part`). The
        encoding of the part in force holds no null token, and msgspec
        writes each other value decoded from JSON text one way (``1`` and
        ``1.0`` apart) and refuses a lone surrogate, so an equal encoding is
        the same JSON value (a non-finite number, written as ``null``, would
        not match). So every rule judges the two alike, and the fold keeps
        the header in force: its tools stay shared with the next deltas,
        which compare them by identity.
        """
        state = self.state
        if state is None:
            return None
        if header is state:  # `known_snapshot`'s
            return self.state
        if type(header) is not dict or list(header) != list(state):
            return None
        for name, value in header.items():
            if name == "system":
                if type(value) is not str or value != state[name]:
                    return None
                continue
            expected = self._part(name, state[name])
            if expected is None or encoding(value) != expected:
                return None
        return state

    def known_snapshot(
        self, text: bytes | bytearray | msgspec.Raw
    ) -> dict[str, Any] | None:
        """The data of a snapshot event whose ``data`` is the JSON text
        `text`, when `text` is exactly the compact encoding of the header in
        force and a snapshot reason, ``{"header": ..., "reason": ...}``;
        else None.

        For a reader that has `text` undecoded (`msgspec.Raw`): a snapshot
        of the header in force (every resume of a harness that did not
        change its opening) then costs a comparison of bytes, not a decode
        and an encode. The data returned decodes from `text` exactly (the
        header is the one in force, spelt as it is) and `snapshot` knows it
        without a look.
        """
        state = self.state
        if state is None or not self.fast:
            return None
        encoded = self._encoding(state)
        if encoded is None:
            return None
        whole = bytes(text)
        start, end = len(_SNAPSHOT_HEAD), len(_SNAPSHOT_HEAD) + len(encoded)
        if not (whole.startswith(_SNAPSHOT_HEAD) and whole.startswith(encoded, start)):
            return None
        reason: str | None = _SNAPSHOT_TAILS.get(whole[end:])
        return None if reason is None else {"header": state, "reason": reason}

    def _encoding(self, header: Header) -> bytes | None:
        """`_clean_encoding(header)`, from its parts' (`_part`)."""
        pieces = []
        for name, value in header.items():
            piece = self._part(name, value)
            if piece is None:
                return None
            pieces.append(_ENCODER.encode(name) + b":" + piece)
        return b"{" + b",".join(pieces) + b"}"

    def _part(self, name: str, value: Any) -> bytes | None:
        """`_clean_encoding` of a part of the header in force, computed once
        while the part stays (each tool once while it stays)."""
        cached = self._parts.get(name)
        if cached is not None and cached[0] is value:
            return cached[1]
        if name == "tools":
            kept: ToolBytes = {}
            encoded = _tools_encoding(value, self._tool_bytes, kept)
            self._tool_bytes = kept
        else:
            encoded = _clean_encoding(value)
        self._parts[name] = (value, encoded)
        return encoded

    def _folded(self, baseline: Header, data: Any) -> Header | None:
        """What `data` folds `baseline` into, when `data` is exactly the delta
        diff yields for that change, so the general path (apply, diff, compare)
        would find nothing; None when that is not shown, and the general path
        judges.

        Shown for deltas of ``system``, ``tools`` and ``config`` arms in
        diff's order, values proven JSON (`proven_json`): a system arm whose
        kept runs are the longest the two prompts share, a tools arm that
        lists the removed and changed tools in the order of the header in
        force, each changed tool differing from the one it replaces, added
        tools none of whose names were there, and a config that differs.
        Each arm is then what `diff_system`, `diff_tools` and
        `diff_canonical` yield from the header it makes.
        tests/conformance/test_check_header_fast.py holds it to the general
        path.
        """
        if type(data) is not dict or not data:
            return None
        last = -1
        for arm in data:
            at = _FAST_ARMS.get(arm, -1)
            if at <= last:
                return None
            last = at
        if not proven_json(data):
            return None
        system = baseline.get("system")
        if "system" in data:
            system = self._system_after(system, data["system"])
            if system is None:
                return None
        tools = baseline.get("tools", [])
        if "tools" in data:
            tools = self._tools_after(tools, data["tools"])
            if tools is None:
                return None
        config = baseline["config"]
        if "config" in data:
            config = data["config"]
            try:
                check_config(config, error=MalformedDelta)
            except MalformedDelta:
                return None
            if fold_equal(baseline["config"], config):
                return None
        result: Header = {"config": config, "system": system, "tools": tools}
        for field in self._message_fields:
            result[field] = baseline.get(field)
        return project_canonical(result, self.revision)

    def _lines(self, system: str | None) -> list[str]:
        """`system_lines(system)`, split once while the prompt stays in force
        (callers never change the list)."""
        cached, lines = self._system
        if cached is system:
            return lines
        lines = system_lines(system)
        self._system = (system, lines)
        return lines

    def _system_after(self, system: str | None, arm: Any) -> str | None:
        """The prompt a system arm makes of `system`, when the arm is the one
        `diff_system` yields for that change and the result is a prompt;
        else None."""
        if type(arm) is not dict or list(arm) != _SYSTEM_ARM:
            return None
        start, end, insert = arm["keepStart"], arm["keepEnd"], arm["insert"]
        if not (
            type(start) is int
            and type(end) is int
            and type(insert) is list
            and start >= 0
            and end >= 0
        ):
            return None
        for line in insert:
            if type(line) is not str or "\n" in line:
                return None
        old = self._lines(system)
        size = len(old)
        if start + end > size:
            return None  # a conflict (SYS-5): the general path names it
        new = old[:start] + insert + old[size - end :]
        # diff keeps the longest head, then the longest tail of what is left
        shortest = min(size, len(new))
        if start < shortest and old[start] == new[start]:
            return None
        if end < shortest - start and old[size - 1 - end] == new[-1 - end]:
            return None
        text = "\n".join(new)
        if not text or text == system:
            return None  # no prompt left, or a no-op (WRITER-3)
        self._system = (text, new)
        return text

    def _tools_after(self, tools: list[Any], arm: Any) -> list[Any] | None:
        """The tools a tools arm makes of `tools`, when the arm is the one
        `diff_tools` yields for that change; else None."""
        if type(arm) is not dict or list(arm) != _TOOLS_ARM:
            return None
        added, removed, changed = arm["added"], arm["removed"], arm["changed"]
        if not (
            type(added) is list and type(removed) is list and type(changed) is list
        ):
            return None
        if not (added or removed or changed):
            return None  # a no-op arm (WRITER-3)
        index = self._tool_index(tools)
        result = list(tools)
        last = -1
        for tool in changed:  # in the header's order, each a real change
            name = tool.get("name") if type(tool) is dict else None
            if type(name) is not str:
                return None
            at = index.get(name, -1)
            if at <= last or fold_equal(tools[at], tool):
                return None
            result[at] = tool
            last = at
        last = -1
        for name in removed:  # in the header's order, none twice
            if type(name) is not str:
                return None
            at = index.get(name, -1)
            if at <= last:
                return None
            last = at
        if removed:
            gone = set(removed)
            if any(tool["name"] in gone for tool in changed):
                return None  # a conflict (TOOLS-5)
            result = [tool for tool in result if tool["name"] not in gone]
        fresh: set[str] = set()
        for tool in added:  # names new to the header, none twice
            name = tool.get("name") if type(tool) is dict else None
            if type(name) is not str or name in index or name in fresh:
                return None
            fresh.add(name)
        if not (removed or added):
            self._names = (result, index)  # each tool where it was
            return result
        return result + added

    def _tool_index(self, tools: list[Any]) -> dict[str, int]:
        """The position of each tool's name in `tools` (a canonical header's:
        names are unique), computed once while the list stays in force."""
        cached, index = self._names
        if cached is tools:
            return index
        index = {tool["name"]: at for at, tool in enumerate(tools)}
        self._names = (tools, index)
        return index


_SNAPSHOT_HEAD = b'{"header":'
_SNAPSHOT_TAILS: dict[bytes, str] = {
    b',"reason":' + _ENCODER.encode(reason) + b"}": reason
    for reason in SNAPSHOT_REASONS
}
_FAST_ARMS = {"system": 0, "tools": 1, "config": 2}
"""The arms `HeaderFold._folded` reads, in diff's order (`Revision.delta_arms`)."""
_SYSTEM_ARM = ["keepStart", "keepEnd", "insert"]
_TOOLS_ARM = ["added", "removed", "changed"]

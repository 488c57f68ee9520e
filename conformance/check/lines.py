"""Decoding the lines of a session file: a fast envelope path, a strict slow path.

Implements the reading side of docs/spec.md sections "JSON values" (JSON-1)
and "JSONL files" (JSONL-1 .. JSONL-4) for the offline checker.

Theory of operation. Almost every line of a real log is canonical: compact
JSON, envelope members in order, and (for ``assistant/chunk``, most of the
log) a ``data`` body nobody needs to look inside. The fast path decodes such
a line with msgspec into `Envelope`, leaving ``data`` and ``surfaceOp`` as
`msgspec.Raw` (validated for syntax, NaN and Infinity by msgspec, but not
built into Python objects). Anything msgspec refuses, and any line the rule
engine wants to look at more closely, goes through `explain_line`: a strict
parse that reports each problem (a BOM, invalid UTF-8, NaN, a duplicate key,
a number too large for a double, broken syntax) and, whenever the text can
still be read, recovers the event leniently so the check goes on. The
strict parser is `reqfold.conformance.check.recording_json`'s.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass, replace
from typing import Annotated, Any

import msgspec
from msgspec import UNSET, Raw, UnsetType

from reqfold.conformance.check.findings import SHOULD, Finding, finding
from reqfold.conformance.check.recording_json import JsonDamaged, ParsedJson, parse_json
from reqfold.reference.json_values import is_integer
from reqfold.reference.session_log import ENVELOPE_KEYS

Line = bytes | bytearray
"""One line of a session file (a long line joined from pieces is a bytearray)."""

WINDOW = 1 << 20
"""Long lines are scanned in windows of this many bytes, never copied whole."""
BOM = b"\xef\xbb\xbf"


class Envelope(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """One event line as the fast path decodes it (LOG-1).

    ``data`` and ``surfaceOp`` stay `msgspec.Raw` until a rule needs them;
    `explain_line` builds the same struct with decoded values instead.
    """

    type: str
    seq: int
    time: Annotated[int, msgspec.Meta(ge=0)]  # a negative time takes the slow path
    data: Raw
    sourceEventSeqs: list[int] | UnsetType = UNSET
    surfaceOp: Raw | UnsetType = UNSET


EVENT_DECODER = msgspec.json.Decoder(Envelope)
VALUE_DECODER = msgspec.json.Decoder()
ENCODER = msgspec.json.Encoder()


# ---------------------------------------------------------------- line bytes

_DIGITS_TO_ZERO = bytes(48 if 48 <= byte <= 57 else 32 for byte in range(256))
_LONG_RUN = b"0" * 309


LONG_INTEGER = 309
"""No line shorter holds an integer too large for a double (`has_long_integer`)."""
_STRIDE = LONG_INTEGER // 3
"""Any `LONG_INTEGER` consecutive offsets hold three multiples of this."""


def has_long_integer(raw: Line) -> bool:
    """Whether `raw` holds a run of digits as long as the shortest integer a
    double may not hold (msgspec reads such an integer without complaint).

    Such a run covers three consecutive bytes of ``raw[::_STRIDE]``, so a
    line whose sample holds no three digits in a row (almost every line)
    holds none; any other line is searched, a long line in overlapping
    windows, so it is never copied whole.
    """
    if len(raw) < LONG_INTEGER:
        return False
    if b"000" not in raw[::_STRIDE].translate(_DIGITS_TO_ZERO):
        return False
    if len(raw) <= WINDOW:
        return _LONG_RUN in raw.translate(_DIGITS_TO_ZERO)
    view = memoryview(raw)
    overlap = len(_LONG_RUN) - 1
    for start in range(0, len(raw), WINDOW):
        window = bytes(view[max(start - overlap, 0) : start + WINDOW])
        if _LONG_RUN in window.translate(_DIGITS_TO_ZERO):
            return True
    return False


def is_utf8(raw: Line) -> bool:
    """Whether `raw` is valid UTF-8; a long line is decoded window by window."""
    try:
        if len(raw) <= WINDOW:
            raw.decode("utf-8")
            return True
        decoder = codecs.getincrementaldecoder("utf-8")()
        view = memoryview(raw)
        for start in range(0, len(raw), WINDOW):
            decoder.decode(view[start : start + WINDOW])
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


# ---------------------------------------------------------------- lines


@dataclass(slots=True)
class LineOutcome:
    """What the strict path made of one line.

    `envelope` is the event as far as it could be read (None when the line
    holds no event); `seq_known` says whether its ``seq`` was an integer;
    `damaged` marks a line whose text is not JSON, which may have held an
    event (the seq contiguity check allows for it).
    """

    envelope: Envelope | None
    findings: list[Finding]
    seq_known: bool = False
    damaged: bool = False


def read_text(raw: Line, number: int, findings: list[Finding]) -> str | None:
    """The line as text, BOM and invalid UTF-8 reported; None for a torn tail."""
    terminated = raw.endswith(b"\n")
    # a view, so a long line is not copied before it is decoded
    body = memoryview(raw)[: len(raw) - 1 if terminated else len(raw)]
    if bytes(body[: len(BOM)]) == BOM:
        findings.append(
            finding(
                "JSONL-1" if number == 1 else "JSONL-4",
                number,
                None,
                "the line starts with a byte order mark (U+FEFF); JSON text in a"
                " session file has none",
            )
        )
        body = body[len(BOM) :]
    try:
        return codecs.utf_8_decode(body, "strict", True)[0]
    except UnicodeDecodeError as error:
        if not terminated:
            return None
        findings.append(
            finding(
                "JSONL-4",
                number,
                None,
                f"damaged line: invalid UTF-8 at byte {error.start + 1}"
                " (a session file is UTF-8 text)",
            )
        )
        return codecs.utf_8_decode(body, "replace", True)[0]


BEFORE_THE_LAST = (
    "; a damaged line before the last makes the file unreadable, and what"
    " follows may miss an event"
)
"""What a damaged line's finding adds, unless the line is the file's last
(`as_the_last_line` takes it out once the reader knows)."""


def as_the_last_line(item: Finding, last: int) -> Finding:
    """`item` without `BEFORE_THE_LAST` when it is about line `last`, the
    file's last: nothing follows it to miss an event."""
    if item.rule != "JSONL-4" or item.line != last:
        return item
    return replace(item, message=item.message.replace(BEFORE_THE_LAST, ""))


def torn_tail(number: int, raw: Line) -> Finding:
    """The finding for a partial final line (JSONL-3): a warning, not damage."""
    return finding(
        "JSONL-3",
        number,
        None,
        f"torn tail: the last line ends mid-write without a newline ({len(raw)}"
        " bytes, not a complete event), the trace of a crash; every line before"
        " it is intact",
        level=SHOULD,
    )


def read_value(raw: Line, number: int) -> tuple[ParsedJson | None, list[Finding]]:
    """Parse one line strictly; report damage (JSONL-3/4) and JSON-1 problems."""
    findings: list[Finding] = []
    terminated = raw.endswith(b"\n")
    text = read_text(raw, number, findings)
    if text is None:
        return None, [torn_tail(number, raw)]
    try:
        parsed = parse_json(text)
    except JsonDamaged as error:
        if not terminated:
            return None, [*findings, torn_tail(number, raw)]
        if any(item.rule == "JSONL-4" and "UTF-8" in item.message for item in findings):
            return None, findings  # one finding per damaged line
        findings.append(
            finding(
                "JSONL-4",
                number,
                None,
                f"damaged line: {error}{BEFORE_THE_LAST}",
            )
        )
        return None, findings
    if not terminated:
        findings.append(
            finding(
                "JSONL-2",
                number,
                None,
                "the last line holds a complete event but does not end in a newline",
            )
        )
    findings.extend(
        finding("JSON-1", number, None, f"not a JSON value: {problem}")
        for problem in parsed.problems
    )
    return parsed, findings


class _Missing:
    """The ``data`` of an event line that has none (reported as LOG-1)."""

    __slots__ = ()


MISSING_DATA: Any = _Missing()


def explain_line(raw: Line, number: int) -> LineOutcome:
    """Read one event line strictly and build its envelope from the value.

    Reports what msgspec's fast path cannot name: JSON-1 problems, damage,
    unknown or missing members, members of the wrong JSON type (LOG-1) and
    member order (LOG-1's SHOULD clause). The shared event checks (empty
    type, negative time, data not an object, LOG-4/LOG-5, SURF-1) are left
    to the rule engine, which applies them to both paths.
    """
    parsed, findings = read_value(raw, number)
    if parsed is None:
        return LineOutcome(None, findings, damaged=True)
    value = parsed.value
    if not isinstance(value, dict):
        findings.append(
            finding(
                "LOG-1", number, None, "an event must be a JSON object", found=value
            )
        )
        return LineOutcome(None, findings, damaged=True)
    seq: Any = value.get("seq")
    seq_known = is_integer(seq)  # JSON-5: 1.0 is an integer too
    at = int(seq) if seq_known else None
    if at is not None:  # the line's own problems, now that its seq is known
        findings = [replace(item, seq=at) for item in findings]
    for key in value:
        if key not in ENVELOPE_KEYS:
            findings.append(
                finding("LOG-1", number, at, f"unknown envelope member {key!r}")
            )
    present = [key for key in value if key in ENVELOPE_KEYS]
    if present != [key for key in ENVELOPE_KEYS if key in value]:
        findings.append(
            finding(
                "LOG-1",
                number,
                at,
                "envelope members should come in the order type, seq, time, data,"
                " sourceEventSeqs, surfaceOp",
                expected=[key for key in ENVELOPE_KEYS if key in value],
                found=present,
                level=SHOULD,
            )
        )
    for key in ("type", "seq", "time", "data"):
        if key not in value:
            findings.append(finding("LOG-1", number, at, f"the event has no {key!r}"))
    kind = value.get("type")
    if "type" in value and not (isinstance(kind, str) and kind):
        findings.append(
            finding("LOG-1", number, at, "type must be a non-empty string", found=kind)
        )
    if "seq" in value and not seq_known:
        findings.append(
            finding("LOG-1", number, None, "seq must be an integer", found=seq)
        )
    time = value.get("time")
    if "time" in value and not is_integer(time):
        findings.append(
            finding("LOG-1", number, at, "time must be an integer (ms)", found=time)
        )
    envelope = Envelope(
        type=kind if isinstance(kind, str) and kind else "",
        seq=-1 if at is None else at,
        time=int(time) if is_integer(time) else 0,
        data=value.get("data", MISSING_DATA),
        sourceEventSeqs=value.get("sourceEventSeqs", UNSET),
        surfaceOp=value.get("surfaceOp", UNSET),
    )
    return LineOutcome(envelope, findings, seq_known=seq_known)


# ---------------------------------------------------------------- storage line

STORAGE_OPTIONAL = {
    "cwd": str,
    "parentSession": str,
    "revision": str,
}


def check_storage_value(value: dict[str, Any], number: int) -> list[Finding]:
    """Report how a ``"type": "session"`` line breaks JSONL-1."""
    problems: list[str] = []
    version = value.get("version")
    if not is_integer(version) or version != 0:
        problems.append(f"unsupported format version {version!r} (expected 0)")
    if not isinstance(value.get("id"), str):
        problems.append("the storage line needs a string id")
    if not is_integer(value.get("createdAt")):
        problems.append("the storage line needs an integer createdAt")
    for key, kind in STORAGE_OPTIONAL.items():
        if key in value and (
            not isinstance(value[key], kind) or isinstance(value[key], bool)
        ):
            problems.append(f"{key} must be a {kind.__name__}")
    seed_length = value.get("seedLength", 0)
    if not (is_integer(seed_length) and seed_length >= 0):
        problems.append("seedLength must be a non-negative integer")
    return [finding("JSONL-1", number, None, problem) for problem in problems]

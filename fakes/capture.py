"""The capture log: every request the fake received, and what it answered.

Each `CapturedRequest` keeps the raw body exactly as received, its parsed
form, the reply the fake sent (the assembled assistant message, or the error
body), the usage it reported and the cache diagnostic. Credentials are
never stored: every header value not on an allow-list of harmless headers
(`http.header_is_harmless`) is replaced by `<redacted>`.

JSONL form (`dump_capture_jsonl`, `GET /_fake/requests.jsonl`): one object
per line, in arrival order, with members in this order::

    {"index": 0, "method": "POST", "path": "/chat/completions",
     "status": 200, "at": 0.0, "key": "9f2c...",
     "headers": [["content-type", "..."], ...],
     "body": {...parsed JSON request body, member order kept...},
     "raw_body": "...exact body text..." | null,
     "raw_body_base64": null | "...when the body is not UTF-8...",
     "raw_body_layout": null | "compact" | ...,
     "reply": {...} | null, "usage": {...} | null, "diagnostic": {...} | null}

A line keeps the body once (issue 31): when the exact text received is
what ``json.dumps`` writes for ``body`` in one of `LAYOUTS` (as most
harnesses' SDKs send it), ``raw_body`` is null and ``raw_body_layout``
names the layout, which rebuilds the text byte for byte (`raw_body_text`).
A request to a path the fake does not serve ends with ``"unserved": true``.

`reqfold check --requests CAPTURE.jsonl` reads `index`, `path` and `body`.
"""

from __future__ import annotations

import base64
import dataclasses
import json
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from reqfold.fakes.body_delta import Packed, Whole, pack_delta, pack_whole, unpack
from reqfold.fakes.diagnostics import Diagnostic
from reqfold.fakes.jsontypes import JsonObject, JsonValue, json_object
from reqfold.fakes.provider_json import parse_json_body
from reqfold.fakes.stats import CaptureStats


@dataclass(frozen=True, slots=True, kw_only=True)
class CapturedRequest:
    """One request the fake received and the answer it gave."""

    index: int
    method: str
    path: str
    headers: tuple[tuple[str, str], ...]
    raw_body: bytes
    body: JsonValue
    status: int
    at: float
    reply: JsonValue = None
    usage: JsonObject | None = None
    key: str = ""
    """A digest of the request's API key (never the key): attributes requests
    to the session or process that sent them."""
    diagnostic: Diagnostic | None = None
    unserved: bool = False
    """A request to a path (or with a method) the fake does not serve,
    answered 404 or 405: captured so a user sees what the harness tried."""

    @property
    def json(self) -> JsonObject:
        """The parsed body as an object (raises if it was not one)."""
        if not isinstance(self.body, dict):
            raise ValueError(f"request {self.index} did not carry a JSON object body")
        return self.body


LAYOUTS: dict[str, tuple[tuple[str, str], bool]] = {
    "compact": ((",", ":"), False),
    "compact, non-ASCII escaped": ((",", ":"), True),
    "spaced": ((", ", ": "), False),
    "spaced, non-ASCII escaped": ((", ", ": "), True),
}
"""The JSON text layouts a body may be written in: ``json.dumps``'s
separators and ``ensure_ascii`` for each name."""


def lay_out(body: JsonValue, layout: str) -> str:
    """`body` as JSON text in the layout named `layout` (`LAYOUTS`)."""
    separators, ascii_only = LAYOUTS[layout]
    return json.dumps(body, separators=separators, ensure_ascii=ascii_only)


def body_layout(body: JsonValue, raw_text: str) -> str | None:
    """The layout that writes `body` as exactly `raw_text`, or None (another
    layout, a number written otherwise, a duplicate key...). The first in
    `LAYOUTS` order (text of ASCII alone is named unescaped); the separators
    the text looks like are tried first, so a body is mostly written once.
    """
    spaced = '": ' in raw_text[:4096]
    likely = sorted(LAYOUTS, key=lambda name: (LAYOUTS[name][0][1] == ": ") != spaced)
    for layout in likely:
        if lay_out(body, layout) == raw_text:
            return layout
    return None


def raw_body_text(line: JsonObject) -> str | None:
    """The exact body text a capture line holds (`raw_body`, else rebuilt from
    `body` in `raw_body_layout`); None when the body was not UTF-8."""
    raw = line.get("raw_body")
    if isinstance(raw, str):
        return raw
    layout = line.get("raw_body_layout")
    if isinstance(layout, str) and layout in LAYOUTS:
        return lay_out(line.get("body"), layout)
    return None


def dump_captured_request(record: CapturedRequest) -> JsonObject:
    """The JSON form of one captured request (one JSONL line)."""
    layout = None
    try:
        raw_text: str | None = record.raw_body.decode("utf-8")
        raw_b64: str | None = None
    except UnicodeDecodeError:
        raw_text = None
        raw_b64 = base64.b64encode(record.raw_body).decode("ascii")
    if raw_text is not None and record.body is not None:
        layout = body_layout(record.body, raw_text)
        if layout is not None:
            raw_text = None  # the body member holds it once
    line: JsonObject = {
        "index": record.index,
        "method": record.method,
        "path": record.path,
        "status": record.status,
        "at": record.at,
        "key": record.key,
        "headers": [[key, value] for key, value in record.headers],
        "body": record.body,
        "raw_body": raw_text,
        "raw_body_base64": raw_b64,
        "raw_body_layout": layout,
        "reply": record.reply,
        "usage": record.usage,
        "diagnostic": json_object(record.diagnostic)
        if record.diagnostic is not None
        else None,
    }
    if record.unserved:
        line["unserved"] = True
    return line


def dump_capture_jsonl(records: Iterable[CapturedRequest]) -> str:
    """One JSON object per line, newline-terminated, in arrival order."""
    return "".join(
        json.dumps(dump_captured_request(record), ensure_ascii=False) + "\n"
        for record in records
    )


DEFAULT_CAPTURE_BYTES = 64 * 1024 * 1024
"""Default bound on the bytes the capture log keeps for bodies (64 MiB)."""

_Raw = bytes  # `CaptureLog.bytes` hides the builtin's name in its body

WHOLE_EVERY = 64
"""A body is kept whole at least every this many records, so reading any
one record undoes at most this many deltas."""


@dataclass(frozen=True, slots=True)
class _Kept:
    """One record as the log keeps it: everything but the body, the raw
    body packed (`reqfold.fakes.body_delta`), and the parsed body only when
    it is not simply the raw body parsed again (`parsed` False)."""

    record: CapturedRequest
    packed: Packed
    parsed: bool


def _unpacked(kept: _Kept, raw: bytes) -> CapturedRequest:
    body = parse_json_body(raw) if kept.parsed else kept.record.body
    return dataclasses.replace(kept.record, raw_body=raw, body=body)


def _read(run: list[_Kept]) -> Iterator[CapturedRequest]:
    """Every record of `run` (whose first body is kept whole), rebuilt one
    at a time: the raw body unpacked, the body parsed when read."""
    raw: bytes | None = None
    for kept in run:
        raw = unpack(kept.packed, raw)
        yield _unpacked(kept, raw)


class CaptureSnapshot:
    """The records a capture log kept at one moment: counted at once, each
    rebuilt (body unpacked and parsed) only when an iteration reaches it."""

    def __init__(self, records: list[_Kept]) -> None:
        self._records = records

    def __len__(self) -> int:
        return len(self._records)

    def __iter__(self) -> Iterator[CapturedRequest]:
        return _read(self._records)


class CaptureLog:
    """Append-only list of captured requests, bounded by count and by bytes.

    `max_records` bounds how many records are kept and `max_bytes` the
    bytes kept for their bodies (`stored_bytes`; `None`: no bound). A body
    is kept as a delta against the body before it (a harness sends each
    request as the previous one plus a little), or whole, zlib-compressed;
    the parsed body is not kept but parsed again when a record is read. So
    a session of 100 KB bodies keeps about a kilobyte a request. Past
    either bound the oldest records are dropped and counted (`dropped`,
    `dropped_bytes`, in raw body bytes); the newest record is always kept,
    even when its body alone exceeds `max_bytes`, so the last request can
    always be inspected.
    """

    def __init__(
        self, max_records: int | None = None, max_bytes: int | None = None
    ) -> None:
        if max_records is not None and max_records < 0:
            raise ValueError(f"max_records must be >= 0, got {max_records}")
        if max_bytes is not None and max_bytes < 0:
            raise ValueError(f"max_bytes must be >= 0, got {max_bytes}")
        self.max_records = max_records
        self.max_bytes = max_bytes
        self._records: deque[_Kept] = deque()
        self._newest_raw: _Raw | None = None
        self._since_whole = 0
        self._bytes = 0
        self._stored = 0
        self._dropped = 0
        self._dropped_bytes = 0

    def __len__(self) -> int:
        return len(self._records)

    def __iter__(self) -> Iterator[CapturedRequest]:
        """The records kept now, rebuilt one at a time as they are read."""
        return _read(list(self._records))

    def snapshot(self) -> CaptureSnapshot:
        """The records kept now, to read later, as often as needed."""
        return CaptureSnapshot(list(self._records))

    def __getitem__(self, position: int) -> CapturedRequest:
        if position < 0:
            position += len(self._records)
        if not 0 <= position < len(self._records):
            raise IndexError("capture position out of range")
        if position == len(self._records) - 1 and self._newest_raw is not None:
            return _unpacked(self._records[position], self._newest_raw)
        start = position
        while not isinstance(self._records[start].packed, Whole):
            start -= 1
        run = [self._records[at] for at in range(start, position + 1)]
        return deque(_read(run), maxlen=1)[0]

    @property
    def bytes(self) -> int:
        """Raw body bytes of the records kept."""
        return self._bytes

    @property
    def stored_bytes(self) -> int:
        """Bytes kept for the records' bodies, which `max_bytes` bounds."""
        return self._stored

    @property
    def dropped(self) -> int:
        """How many oldest records were dropped to respect the bounds."""
        return self._dropped

    @property
    def dropped_bytes(self) -> int:
        """Raw body bytes of the dropped records."""
        return self._dropped_bytes

    def append(self, record: CapturedRequest, *, parsed: bool = False) -> None:
        """Add a record, dropping the oldest beyond the bounds.

        `parsed`: `record.body` is `raw_body` parsed by
        `reqfold.fakes.provider_json.parse_json_body`, so it need not be kept.
        """
        if self.max_records == 0:
            self._dropped += 1
            self._dropped_bytes += len(record.raw_body)
            return
        raw = record.raw_body
        packed = self._pack(raw)
        kept = _Kept(
            record=dataclasses.replace(
                record, raw_body=b"", body=None if parsed else record.body
            ),
            packed=packed,
            parsed=parsed,
        )
        self._records.append(kept)
        self._newest_raw = raw
        self._bytes += len(raw)
        self._stored += packed.stored
        while len(self._records) > 1 and self._over():
            self._drop_oldest()

    def _pack(self, raw: _Raw) -> Packed:
        earlier = self._newest_raw
        if earlier is not None and self._records and self._since_whole < WHOLE_EVERY:
            delta = pack_delta(raw, earlier)
            if delta.stored * 8 < len(raw):
                self._since_whole += 1
                return delta
            whole = pack_whole(raw)
            if delta.stored < whole.stored:
                self._since_whole += 1
                return delta
            self._since_whole = 0
            return whole
        self._since_whole = 0
        return pack_whole(raw)

    def _drop_oldest(self) -> None:
        old = self._records.popleft()
        self._bytes -= old.packed.size
        self._stored -= old.packed.stored
        self._dropped += 1
        self._dropped_bytes += old.packed.size
        if self._records and not isinstance(self._records[0].packed, Whole):
            # The new oldest was a delta against the body just dropped: keep
            # it whole now, so every record can still be rebuilt.
            following = self._records[0]
            raw = unpack(following.packed, unpack(old.packed, None))
            whole = pack_whole(raw)
            self._stored += whole.stored - following.packed.stored
            self._records[0] = dataclasses.replace(following, packed=whole)

    def _over(self) -> bool:
        return (
            self.max_records is not None and len(self._records) > self.max_records
        ) or (self.max_bytes is not None and self._stored > self.max_bytes)

    def by_index(self, index: int) -> CapturedRequest | None:
        """The record with request index `index`, if still kept."""
        for position in range(len(self._records) - 1, -1, -1):
            if self._records[position].record.index == index:
                return self[position]
        return None

    def summaries(self) -> list[CapturedRequest]:
        """The records kept, without their bodies (`raw_body` empty, `body`
        None): what a caller needs that reads only the rest (diagnostics)."""
        return [kept.record for kept in self._records]

    def clear(self) -> None:
        """Forget every record."""
        self._records.clear()
        self._newest_raw = None
        self._since_whole = 0
        self._bytes = 0
        self._stored = 0
        self._dropped = 0
        self._dropped_bytes = 0

    def stats(self) -> CaptureStats:
        """What the log holds, its bounds, and what they made it drop."""
        return CaptureStats(
            requests=len(self),
            bytes=self.bytes,
            max_requests=self.max_records,
            max_bytes=self.max_bytes,
            dropped_requests=self.dropped,
            dropped_bytes=self.dropped_bytes,
            stored_bytes=self.stored_bytes,
        )

    def to_jsonl(self) -> str:
        """The whole log as JSONL text."""
        return dump_capture_jsonl(self)

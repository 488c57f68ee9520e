"""The capture log: every request the fake received, and what it answered.

Each `CapturedRequest` keeps the raw body exactly as received, its parsed
form, the reply the fake sent (the assembled assistant message, or the error
body), the usage it reported and the cache diagnostic. Credentials are
never stored: header values of `authorization`, `x-api-key` and similar are
replaced by `<redacted>`.

JSONL form (`dump_capture_jsonl`, `GET /_fake/requests.jsonl`): one object
per line, in arrival order, with members in this order::

    {"index": 0, "method": "POST", "path": "/chat/completions",
     "status": 200, "at": 0.0, "key": "9f2c...",
     "headers": [["content-type", "..."], ...],
     "body": {...parsed JSON request body, member order kept...},
     "raw_body": "...exact body text..." | null,
     "raw_body_base64": null | "...when the body is not UTF-8...",
     "reply": {...} | null, "usage": {...} | null, "diagnostic": {...} | null}

`reqfold check --requests CAPTURE.jsonl` reads `index`, `path` and `body`.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from fakes.diagnostics import Diagnostic
from fakes.jsontypes import JSONObject, JSONValue, json_object


@dataclass(frozen=True, slots=True, kw_only=True)
class CapturedRequest:
    """One request the fake received and the answer it gave."""

    index: int
    method: str
    path: str
    headers: tuple[tuple[str, str], ...]
    raw_body: bytes
    body: JSONValue
    status: int
    at: float
    reply: JSONValue = None
    usage: JSONObject | None = None
    key: str = ""
    """A digest of the request's API key (never the key): attributes requests
    to the session or process that sent them."""
    diagnostic: Diagnostic | None = None

    @property
    def json(self) -> JSONObject:
        """The parsed body as an object (raises if it was not one)."""
        if not isinstance(self.body, dict):
            raise ValueError(f"request {self.index} did not carry a JSON object body")
        return self.body


def dump_captured_request(record: CapturedRequest) -> JSONObject:
    """The JSON form of one captured request (one JSONL line)."""
    try:
        raw_text: str | None = record.raw_body.decode("utf-8")
        raw_b64: str | None = None
    except UnicodeDecodeError:
        raw_text = None
        raw_b64 = base64.b64encode(record.raw_body).decode("ascii")
    return {
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
        "reply": record.reply,
        "usage": record.usage,
        "diagnostic": json_object(record.diagnostic)
        if record.diagnostic is not None
        else None,
    }


def dump_capture_jsonl(records: Iterable[CapturedRequest]) -> str:
    """One JSON object per line, newline-terminated, in arrival order."""
    return "".join(
        json.dumps(dump_captured_request(record), ensure_ascii=False) + "\n"
        for record in records
    )


class CaptureLog:
    """Append-only list of captured requests, optionally bounded."""

    def __init__(self, max_records: int | None = None) -> None:
        if max_records is not None and max_records < 0:
            raise ValueError(f"max_records must be >= 0, got {max_records}")
        self.max_records = max_records
        self._records: list[CapturedRequest] = []
        self._dropped = 0

    def __len__(self) -> int:
        return len(self._records)

    def __iter__(self) -> Iterator[CapturedRequest]:
        return iter(list(self._records))

    def __getitem__(self, position: int) -> CapturedRequest:
        return self._records[position]

    @property
    def dropped(self) -> int:
        """How many oldest records were dropped to respect `max_records`."""
        return self._dropped

    def append(self, record: CapturedRequest) -> None:
        """Add a record, dropping the oldest beyond `max_records`."""
        self._records.append(record)
        if self.max_records is not None and len(self._records) > self.max_records:
            overflow = len(self._records) - self.max_records
            del self._records[:overflow]
            self._dropped += overflow

    def by_index(self, index: int) -> CapturedRequest | None:
        """The record with request index `index`, if still kept."""
        for record in reversed(self._records):
            if record.index == index:
                return record
        return None

    def clear(self) -> None:
        """Forget every record."""
        self._records.clear()
        self._dropped = 0

    def to_jsonl(self) -> str:
        """The whole log as JSONL text."""
        return dump_capture_jsonl(self._records)

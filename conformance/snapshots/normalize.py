"""What a session did, with what varies between identical runs masked.

A regression snapshot compares two runs of the same scenario. Some of what
a harness writes differs on every run however little its behaviour
changed: the clock, ids it generates at random, the temporary folder and
the port the suite happened to use, the HTTP client's transport headers.
`session_snapshot` turns a session log and the requests the fake provider
captured into plain JSON data with those masked and everything else kept,
members in the order the harness wrote them (the order is part of what
the provider caches, JSON-3):

* a member named in `TIME_MEMBERS` (``time``, ``createdAt``, ...) whose
  value is a number or a string becomes ``"<time>"``, anywhere in the log
  or a request. Times inside free text (a timestamp in the system prompt)
  are kept: that is a behaviour (CACHE-2), and the snapshot shows it;
* a UUID, a ULID or a long hex token, anywhere in a string, becomes
  ``<id-N>``, numbered by first appearance, so the same id in two places
  stays the same mask and the links between events survive;
* literal text given in `replace` (the run's folder) becomes its mask;
* the transport headers `TRANSPORT_HEADERS` are left out, and every value
  not known to be harmless (`fakes.http.header_is_harmless`) shown as
  ``<secret>``.

Pure: bytes and JSON in, JSON out.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from reqfold.fakes.capture import body_layout, raw_body_text
from reqfold.fakes.http import header_is_harmless
from reqfold.reference.json_values import JsonObject, JsonValue

TIME_MEMBERS = frozenset(
    {"time", "createdAt", "timestamp", "created", "updatedAt", "startedAt", "endedAt"}
)
"""Members whose number or string value is a clock reading."""

TRANSPORT_HEADERS = frozenset(
    {"host", "content-length", "connection", "accept-encoding"}
)
"""Headers the HTTP client sets on its own (the port, the body's length, the
connection and compression it negotiates): not the harness's behaviour."""

TIME = "<time>"

_GENERATED_ID = re.compile(
    r"(?<![0-9A-Za-z])(?:"
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
    r"|[0-7][0-9A-HJKMNP-TV-Z]{25}"
    r"|(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{20,}"
    r")(?![0-9A-Za-z])"
)
"""A UUID (any version), a ULID, or a lower-case hex token of 20+ digits that
mixes digits and letters (a digest or a random token, not a word), not
inside a longer run of letters and digits (``msg_<uuid>`` is masked too)."""


class Masker:
    """Masks times, generated ids and given literals in JSON data.

    One masker serves one snapshot, so an id gets the same mask in the log
    and in the requests.
    """

    def __init__(self, replace: Mapping[str, str] | None = None) -> None:
        # Longest first: a folder is masked before a folder inside it would be.
        self._replace = sorted(
            ((old, new) for old, new in (replace or {}).items() if old),
            key=lambda pair: -len(pair[0]),
        )
        self._ids: dict[str, str] = {}

    def text(self, value: str) -> str:
        """`value` with the literals and the generated ids masked."""
        for old, new in self._replace:
            value = value.replace(old, new)
        return _GENERATED_ID.sub(self._id, value)

    def _id(self, match: re.Match[str]) -> str:
        found = match.group(0)
        mask = self._ids.get(found)
        if mask is None:
            mask = self._ids[found] = f"<id-{len(self._ids) + 1}>"
        return mask

    def value(self, value: JsonValue) -> JsonValue:
        """A copy of `value` with every time member and string masked."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.value(item) for item in value]
        if isinstance(value, dict):
            return {
                self.text(key): TIME
                if key in TIME_MEMBERS
                and isinstance(item, int | float | str)
                and not isinstance(item, bool)
                else self.value(item)
                for key, item in value.items()
            }
        return value


def session_snapshot(
    *,
    log: bytes,
    requests: Sequence[JsonObject],
    instances: Sequence[str] = (),
    replace: Mapping[str, str] | None = None,
) -> JsonObject:
    """The snapshot data of one session: its log and its requests, masked.

    `requests` are captured requests in the fake's JSON form
    (`fakes.dump_captured_request`, one line of a ``*.requests.jsonl``);
    `instances` names the instance that sent each, when known.
    """
    masker = Masker(replace)
    return {
        "log": [masker.value(line) for line in log_lines(log)],
        "requests": [
            request_snapshot(
                request,
                masker,
                instances[position] if position < len(instances) else None,
            )
            for position, request in enumerate(requests)
        ],
    }


def log_lines(log: bytes) -> list[JsonValue]:
    """Every line of a session file as JSON, members in their order.

    A line that is not JSON is kept as ``{"unparsed line": text}`` and a
    last line with no newline as ``{"torn tail": text}``: a snapshot of a
    damaged log shows the damage instead of failing.
    """
    text = log.decode("utf-8", errors="replace")
    *complete, tail = text.split("\n")
    lines: list[JsonValue] = []
    for line in complete:
        try:
            lines.append(json.loads(line))
        except ValueError:
            lines.append({"unparsed line": line})
    if tail:
        lines.append({"torn tail": tail})
    return lines


def request_snapshot(
    request: JsonObject, masker: Masker, instance: str | None = None
) -> JsonObject:
    """One captured request: who sent it, how, what, and what the cache did."""
    shown: JsonObject = {} if instance is None else {"instance": instance}
    shown["request"] = f"{request.get('method', '?')} {request.get('path', '?')}"
    shown["status"] = request.get("status")
    shown["headers"] = list(_headers(request.get("headers") or [], masker))
    body = request.get("body")
    raw = raw_body_text(request)
    if body is None and raw is None and request.get("raw_body_base64") is not None:
        shown["body form"] = "not UTF-8"
    elif body is None and raw is not None:
        shown["body form"] = "not JSON"
        shown["body"] = masker.text(raw)
    else:
        shown["body form"] = body_form(body, raw)
        shown["body"] = masker.value(body)
    cache = cache_line(request.get("diagnostic"))
    if cache is not None:
        shown["cache"] = cache
    return shown


def _headers(pairs: Iterable[Any], masker: Masker) -> Iterable[str]:
    for pair in pairs:
        if not (isinstance(pair, list | tuple) and len(pair) == 2):
            continue
        name, value = str(pair[0]).lower(), str(pair[1])
        if name in TRANSPORT_HEADERS:
            continue
        shown = masker.text(value) if header_is_harmless(name) else "<secret>"
        yield f"{name}: {shown}"


def body_form(body: JsonValue, raw: str | None) -> str:
    """How the body's JSON text is laid out: a change of layout changes the
    bytes the provider caches even when the JSON value is the same."""
    if raw is None:
        return "unknown"
    return body_layout(body, raw) or "other layout"


def cache_line(diagnostic: Any) -> str | None:
    """What the fake's cache made of a request, in one line (docs/fake-provider.md)."""
    if not isinstance(diagnostic, dict):
        return None
    line = (
        f"{diagnostic.get('prompt_tokens')} prompt tokens,"
        f" {diagnostic.get('cached_tokens')} cached; {diagnostic.get('relation')}"
    )
    closest = diagnostic.get("closest_request")
    if closest is not None:
        line += f" of #{closest}"
    divergence = diagnostic.get("divergence")
    if isinstance(divergence, dict) and divergence.get("field") is not None:
        line += f" at {divergence['field']}"
    return line

"""Captured requests as the cache judgement reads them.

A capture is what the fake keeps (`GET /_fake/requests.jsonl`, one JSON
object per line, see `reqfold.fakes.capture`), or a file a user kept of
those lines. The judgement needs only `index`, `path`, `status`, `key`, `body`,
`reply` (the assistant message the fake sent back), `usage`, the
provider's own answer in `diagnostic`, and what only the capture's writer
can know: `process_start` (`resume` or `fresh`: a harness process began
with this request), `process_name` (the name of the process that sent it)
and `expect_break` (why a break there is expected);
`reqfold demo` writes both, from its log. Every other
member (`raw_body` above all, which holds the body a second time) is
skipped by the decoder without being built.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

import msgspec

from reqfold.conformance.json_text.damage import line_damage
from reqfold.fakes.capture import CapturedRequest
from reqfold.fakes.jsontypes import JsonObject, JsonValue


class CaptureLineError(ValueError):
    """A capture line that is not a captured request (the message says where)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CapturedCall:
    """One captured request: what the judgement reads of it."""

    index: int
    path: str
    status: int
    body: JsonValue
    reply: JsonValue = None
    usage: JsonObject | None = None
    key: str = ""
    """The fake's digest of the request's API key (a harness given a fresh
    key per process, as `reqfold probe` does, tells its processes apart)."""
    provider: JsonObject | None = None
    """What the provider's own cache diagnostics answered, when the request
    opted in to them (the fake's diagnostic keeps it under ``provider``)."""
    expect_break: str | None = None
    """Why a break at this request is expected, as the capture's writer said
    (an ``--expect-break`` for the same index wins)."""
    process_start: Literal["resume", "fresh"] | None = None
    """A harness process began with this request, as the capture's writer
    said (a ``--process-start`` for the same index wins)."""
    process_name: str | None = None
    """The name the capture's writer gives the process that sent it
    (``reqfold probe --keep``: its run's, ``run 2``); the judgement names a
    process it starts here so, else ``process N``."""


class _Line(msgspec.Struct):
    index: int
    path: str = ""
    status: int = 200
    body: Any = None
    reply: Any = None
    usage: dict[str, Any] | None = None
    key: str = ""
    diagnostic: Any = None
    expect_break: Any = None
    process_start: Any = None
    process_name: Any = None


_DECODER = msgspec.json.Decoder(_Line)


def read_capture_lines(lines: Iterable[bytes | str]) -> Iterator[CapturedCall]:
    """Decode capture lines one at a time (blank lines are skipped).

    Raises `CaptureLineError` naming the line for one that is not a
    captured request object.
    """
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            item = _DECODER.decode(line)
        except msgspec.DecodeError as error:
            raw = (
                line.encode("utf-8", "surrogatepass") if isinstance(line, str) else line
            )
            damage = (
                None if isinstance(error, msgspec.ValidationError) else line_damage(raw)
            )
            if damage is not None:  # not JSON: said as the checker says it
                raise CaptureLineError(f"line {number}: not JSON ({damage})") from None
            raise CaptureLineError(
                f"line {number}: not a captured request ({error})"
            ) from None
        yield _call(
            item,
            expect_break=item.expect_break
            if isinstance(item.expect_break, str) and item.expect_break
            else None,
            process_start=_process_start(item.process_start),
            process_name=item.process_name
            if isinstance(item.process_name, str)
            and item.process_name
            and item.process_name.isprintable()
            else None,
        )


def calls_from_records(records: Iterable[CapturedRequest]) -> Iterator[CapturedCall]:
    """The fake's in-memory captures (`FakeProvider.capture`) as calls."""
    for record in records:
        yield _call(record)


def _call(
    captured: _Line | CapturedRequest,
    *,
    expect_break: str | None = None,
    process_start: Literal["resume", "fresh"] | None = None,
    process_name: str | None = None,
) -> CapturedCall:
    """What the judgement reads of a captured request, decoded from a line or
    kept in memory (only a line can carry what its writer said)."""
    return CapturedCall(
        index=captured.index,
        path=captured.path,
        status=captured.status,
        body=captured.body,
        reply=captured.reply,
        usage=captured.usage,
        key=captured.key,
        provider=_provider(captured.diagnostic),
        expect_break=expect_break,
        process_start=process_start,
        process_name=process_name,
    )


def _process_start(value: object) -> Literal["resume", "fresh"] | None:
    if value == "resume":
        return "resume"
    if value == "fresh":
        return "fresh"
    return None


def _provider(diagnostic: object) -> JsonObject | None:
    """The provider's own answer a fake diagnostic keeps, if any."""
    answered = diagnostic.get("provider") if isinstance(diagnostic, dict) else None
    return answered if isinstance(answered, dict) else None

"""Proving a decoded line canonical: the checker's general path.

Implements the part of docs/spec.md JSON-1 and LOG-1 that a line msgspec
decoded still owes (docs/checker.md, "What is checked, and how"): re-encoding
the event, with ``surfaceOp`` and the ``data`` its rules read decoded
(`bodies`: how much, by type), must give back the line exactly. That rules
out a duplicate key (the decoded object would be shorter), members out of
order and non-compact text, which the strict path (`lines.explain_line`)
then tells apart.

Theory of operation. `proven` decodes what the type's rules read into the
event in place, encodes it once and compares; a line longer than `WINDOW`
is compared piece by piece where it lies (`_encodes_to`), so it is never
encoded a second time.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, Raw

from reqfold.conformance.check.lines import (
    ENCODER,
    VALUE_DECODER,
    WINDOW,
    Envelope,
    Line,
)
from reqfold.conformance.check.reader import DECODE_ERRORS
from reqfold.reference.header import DELTA, SNAPSHOT
from reqfold.reference.messages import SURFACE_TYPES

DATA_TYPES = frozenset({SNAPSHOT, DELTA})
"""Event types whose whole data a rule reads; other bodies stay `msgspec.Raw`
(checked for syntax, NaN/Infinity and UTF-8) unless ``--thorough``. With
``--requests`` the surface types join them, for the derived history."""

MEMBER_TYPES = frozenset({"turn/start", "turn/end", "step/start", "step/end"})
"""Event types whose rules read a few top-level members of data (``turn``,
``step``, whether ``reason`` is there). Their data is decoded whole, except
on a line longer than `WINDOW`: there it is decoded one level deep and the
other members' values stay `msgspec.Raw` (checked like an unread body), so
a huge value costs no memory."""

RAW, UNREAD, MEMBERS, WHOLE = "raw", "unread", "members", "whole"
"""How the general path reads a type's ``data`` (`bodies`): left `msgspec.Raw`
inside a proven line; left Raw in a line not proven at all (``assistant/chunk``);
`MEMBER_TYPES`' way; decoded whole."""


def bodies(*, thorough: bool, derive: bool) -> dict[str, str]:
    """How the general path reads the ``data`` of each type it names (with
    ``derive``, for ``--requests``, the surface types' whole too; with
    ``--thorough`` none: the caller reads every type's whole)."""
    if thorough:
        return {}
    table = dict.fromkeys(MEMBER_TYPES, MEMBERS)
    table.update(dict.fromkeys(DATA_TYPES, WHOLE))
    if derive:
        table.update(dict.fromkeys(SURFACE_TYPES, WHOLE))
    table["assistant/chunk"] = UNREAD
    return table


MEMBERS_READ = ("turn", "step")
MEMBERS_DECODER = msgspec.json.Decoder(dict[str, Raw])
_PLACEHOLDER = Raw(b"0")
_APPEND = Raw(b'"append"')
"""The surfaceOp of most surface events, known without decoding it."""
SHORT = 1 << 16
"""Lines up to this long are compared with a copy of their encoding."""


def proven(event: Envelope, raw: Line, body: str) -> bool:
    """Whether `raw` is exactly `event` encoded, once the ``data`` its type's
    rules read (`body`) and ``surfaceOp`` are decoded into it.

    `raw` is a whole line (it ends in a newline) of valid UTF-8. On True the
    event holds the decoded values; on False the line takes the strict path.
    """
    try:
        if body is WHOLE:
            event.data = VALUE_DECODER.decode(event.data)
        elif body is MEMBERS:
            event.data = (
                VALUE_DECODER.decode(event.data)
                if len(raw) <= WINDOW
                else top_members(event.data)
            )
        op = event.surfaceOp
        if op is not UNSET:
            value: Any = "append" if op == _APPEND else VALUE_DECODER.decode(op)
            event.surfaceOp = value
    except DECODE_ERRORS:
        return False
    size = len(raw)
    if size <= WINDOW:  # the common case: one encode, one compare
        encoded = ENCODER.encode(event)
        if size <= SHORT:  # copying `encoded` costs less than startswith's call
            return encoded + b"\n" == raw
        return len(encoded) + 1 == size and raw.startswith(encoded)
    return _encodes_to(event, raw)


def top_members(data: Raw) -> Any:
    """`data` decoded one level deep: the members rules read (`MEMBERS_READ`)
    as values, the others as `msgspec.Raw` (raises on a non-object)."""
    members: dict[str, Any] = MEMBERS_DECODER.decode(data)
    for name in MEMBERS_READ:
        if name in members:
            members[name] = VALUE_DECODER.decode(members[name])
    return members


def _encodes_to(event: Envelope, raw: Line) -> bool:
    """Whether encoding `event` gives back `raw` (less its newline) exactly.

    For a line longer than `WINDOW` (`proven` does the common case
    itself): it is compared piece by piece, with the `msgspec.Raw`
    values of the line compared where they lie, so a huge line is never
    encoded a second time.
    """
    data = event.data
    event.data = _PLACEHOLDER
    frame = ENCODER.encode(event)
    event.data = data
    cut = frame.index(b',"data":0') + len(b',"data":')
    pieces: list[Any] = [frame[:cut]]
    if type(data) is Raw:
        pieces.append(data)
    elif type(data) is dict and any(type(v) is Raw for v in data.values()):
        pieces.append(b"{")
        for index, (name, value) in enumerate(data.items()):
            head = ENCODER.encode(name) + b":"
            pieces.append(b"," + head if index else head)
            pieces.append(value if type(value) is Raw else ENCODER.encode(value))
        pieces.append(b"}")
    else:
        pieces.append(ENCODER.encode(data))
    pieces.append(frame[cut + 1 :])
    pieces.append(b"\n")
    if sum(len(piece) for piece in pieces) != len(raw):
        return False
    position = 0
    for piece in pieces:
        if not raw.startswith(memoryview(piece), position):
            return False
        position += len(piece)
    return True

"""Request bodies kept small: whole and compressed, or as a delta.

A harness sends each request as the previous one plus a little: the same
opening, the same history, a few new messages, the same tools after them.
So the capture keeps a body as the edits that make it from the body before
it (`Delta`: byte ranges copied from that body and the bytes inserted
between them, compressed), or whole and compressed (`Whole`) when there is
no earlier body or a delta would not save much. Pure functions on bytes;
`reqfold.fakes.capture` decides which body a delta is against.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

ANCHOR = 32
"""Bytes of the earlier body looked for in the new one to resume copying."""

MAX_COPIES = 8
"""Copied ranges at most in one delta; past them the rest is inserted."""

COMPRESS_FROM = 256
"""Inserted bytes below this are kept as they are (zlib would not pay)."""

OVERHEAD = 64
"""Bytes counted for each kept body beyond its data (its Python objects)."""


@dataclass(frozen=True, slots=True)
class Whole:
    """A body kept whole: zlib-compressed when that made it smaller."""

    data: bytes
    compressed: bool
    size: int

    @property
    def stored(self) -> int:
        """Bytes this keeps (counted against the capture bound)."""
        return len(self.data) + OVERHEAD


@dataclass(frozen=True, slots=True)
class Delta:
    """A body as edits of the body before it.

    `pieces` are, in order, `(offset, length)` ranges of the earlier body
    (offset >= 0) or `(-1, length)` for the next `length` bytes of the
    inserted bytes (`inserted`, zlib-compressed when `compressed`).
    """

    pieces: tuple[tuple[int, int], ...]
    inserted: bytes
    compressed: bool
    size: int

    @property
    def stored(self) -> int:
        """Bytes this keeps (counted against the capture bound)."""
        return len(self.inserted) + 16 * len(self.pieces) + OVERHEAD


Packed = Whole | Delta


def common_prefix(first: bytes, second: bytes, first_at: int, second_at: int) -> int:
    """How many bytes `first` from `first_at` and `second` from `second_at`
    share: a binary search of `startswith` against a memoryview slice, each
    a `memcmp` that copies nothing (a 100 KB body takes microseconds)."""
    view = memoryview(second)
    low, high = 0, min(len(first) - first_at, len(second) - second_at)
    while low < high:
        middle = (low + high + 1) // 2
        if first.startswith(view[second_at + low : second_at + middle], first_at + low):
            low = middle
        else:
            high = middle - 1
    return low


def _squeeze(data: bytes) -> tuple[bytes, bool]:
    if len(data) < COMPRESS_FROM:
        return data, False
    packed = zlib.compress(data, 1)
    return (packed, True) if len(packed) < len(data) else (data, False)


def pack_whole(raw: bytes) -> Whole:
    """`raw` kept whole (compressed when that saves bytes)."""
    data, compressed = _squeeze(raw)
    return Whole(data=data, compressed=compressed, size=len(raw))


def pack_delta(raw: bytes, earlier: bytes) -> Delta:
    """`raw` as ranges of `earlier` and the bytes inserted between them.

    Greedy: copy the longest run shared from where both bodies stand; where
    they differ, find the next `ANCHOR` bytes of `earlier` further on in
    `raw` and insert what lies before them; after `MAX_COPIES` ranges, or
    when the anchor is not found, insert the rest.
    """
    pieces: list[tuple[int, int]] = []
    inserted: list[bytes] = []
    at, old_at = 0, 0
    copies = 0
    while at < len(raw) and copies < MAX_COPIES:
        shared = common_prefix(raw, earlier, at, old_at)
        if shared >= ANCHOR or (shared and at + shared == len(raw)):
            pieces.append((old_at, shared))
            at += shared
            old_at += shared
            copies += 1
            continue
        anchor = earlier[old_at + shared : old_at + shared + ANCHOR]
        found = raw.find(anchor, at) if len(anchor) == ANCHOR else -1
        if found < 0:
            break
        pieces.append((-1, found - at))
        inserted.append(raw[at:found])
        old_at += shared
        at = found
    if at < len(raw):
        pieces.append((-1, len(raw) - at))
        inserted.append(raw[at:])
    data, compressed = _squeeze(b"".join(inserted))
    return Delta(
        pieces=tuple(pieces), inserted=data, compressed=compressed, size=len(raw)
    )


def unpack(packed: Packed, earlier: bytes | None) -> bytes:
    """The body `packed` keeps (a `Delta` needs the body it was made from)."""
    if isinstance(packed, Whole):
        return zlib.decompress(packed.data) if packed.compressed else packed.data
    if earlier is None:
        raise ValueError("a delta needs the body it was made from")
    inserted = (
        zlib.decompress(packed.inserted) if packed.compressed else packed.inserted
    )
    parts: list[bytes] = []
    taken = 0
    for offset, length in packed.pieces:
        if offset < 0:
            parts.append(inserted[taken : taken + length])
            taken += length
        else:
            parts.append(earlier[offset : offset + length])
    return b"".join(parts)

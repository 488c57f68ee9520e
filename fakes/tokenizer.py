"""A deterministic approximate tokenizer that needs no vocabulary download.

Algorithm `approx-v1` (versioned: changing it changes every count):

1. Split the text into pieces with one regular expression, tried in order:
   - one CJK, kana or hangul character is one piece;
   - a run of 1-4 letters, with an optional leading space (`" quick"`,
     `"brow"`, `"n"`);
   - a run of 1-3 decimal digits, with an optional leading space;
   - a run of whitespace;
   - any other single character (punctuation, symbols, underscore).
   Every character belongs to exactly one piece, so the pieces concatenate
   back to the text.
2. A piece's token id is the CRC-32 of its UTF-8 bytes: stable across
   processes, platforms and Python versions, with no table to ship.

English prose comes out at roughly 4 characters per token, close enough to
real BPE vocabularies (within about 20 %) for cache accounting, which only
needs counts to be deterministic and prefix-stable.

Prefix stability: BPE over a concatenated prompt is not prefix-stable
(appending text can merge with the previous tail). The fake therefore never
tokenizes a whole prompt: it tokenizes each *segment* (one tool definition,
one message, one content block) on its own and prefixes it with a fixed
boundary token, like a chat template's special tokens. Appending a message
then never changes the tokens of earlier ones. `SegmentEncoder` memoizes
segments by content digest, so a growing conversation only tokenizes what
is new; `encode_keyed` also skips rendering and digesting a segment it
has seen, given a key that determines the segment's text.
"""

from __future__ import annotations

import array
import hashlib
import re
import threading
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterator

TOKENIZER_NAME = "approx-v1"

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_PIECE = re.compile(
    rf"[{_CJK}]"
    rf"| ?(?:(?![{_CJK}])[^\W\d_]){{1,4}}"
    r"| ?\d{1,3}"
    r"|\s+"
    r"|.",
    re.DOTALL,
)

# The token every segment starts with (a chat template's turn marker).
BOUNDARY_TOKEN = zlib.crc32(b"<|segment|>")


WINDOW = 1 << 14
"""Characters tokenized at a time: a long text is split into pieces one
window at a time, so the temporary piece strings stay small whatever the
text's length, and no single call holds the interpreter for long (other
threads keep running while a large prompt is tokenized)."""


def _piece_windows(text: str, window: int = WINDOW) -> Iterator[list[str]]:
    """The pieces of `text`, one window's worth at a time, in order.

    A piece that ends before the window's end is the piece the whole text
    has there (a match only looks ahead into the text it covers), so each
    window keeps its pieces but the last, and the next window starts where
    the kept ones end.
    """
    start, end = 0, len(text)
    findall = _PIECE.findall
    while start < end:
        stop = min(start + window, end)
        pieces = findall(text[start:stop])
        while stop < end and len(pieces) < 2:
            # One piece (a long whitespace run) fills the window: double it
            # (doubling keeps a run of n characters at O(n) work in all).
            stop = min(start + 2 * (stop - start), end)
            pieces = findall(text[start:stop])
        if stop < end:
            pieces.pop()
        yield pieces
        start += sum(map(len, pieces))


def split_pieces(text: str) -> list[str]:
    """Split `text` into the pieces that become tokens (they join back to it)."""
    return [piece for pieces in _piece_windows(text) for piece in pieces]


def _token_ids(text: str) -> Iterator[list[int]]:
    crc = zlib.crc32
    for pieces in _piece_windows(text):
        yield [crc(piece.encode("utf-8", "surrogatepass")) for piece in pieces]


def tokenize(text: str) -> list[int]:
    """Return the `approx-v1` token ids of `text`."""
    return [token for ids in _token_ids(text) for token in ids]


def count_tokens(text: str) -> int:
    """Return how many `approx-v1` tokens `text` has."""
    return sum(map(len, _piece_windows(text)))


def _digest(text: str) -> bytes:
    """BLAKE2b-128 of the UTF-8 text, encoded a window at a time."""
    hasher = hashlib.blake2b(digest_size=16)
    step = WINDOW * 16
    for start in range(0, len(text), step):
        hasher.update(text[start : start + step].encode("utf-8", "surrogatepass"))
    return hasher.digest()


def segment_token_count(text: str) -> int:
    """Tokens one prompt segment with this canonical text contributes."""
    return 1 + count_tokens(text)


class SegmentEncoder:
    """Turns segment texts into packed token ids, memoized by content digest.

    `encode(text)` returns `(digest, packed)` where `digest` is a 16-byte
    BLAKE2b digest of the text and `packed` the segment's tokens (boundary
    token first) as native unsigned 32-bit integers. The memo keeps at most
    `max_entries` segments and `max_bytes` bytes of packed tokens (a
    segment larger than an eighth of that is not kept), and forgets the
    oldest first; results never depend on what is memoized.
    Safe to call from several threads: tokenizing runs outside the memo's
    lock.
    """

    def __init__(
        self, max_entries: int = 65_536, max_bytes: int = 64 * 1024 * 1024
    ) -> None:
        if max_entries < 0:
            raise ValueError(f"max_entries must be >= 0, got {max_entries}")
        if max_bytes < 0:
            raise ValueError(f"max_bytes must be >= 0, got {max_bytes}")
        self._max_entries = max_entries
        self._max_bytes = max_bytes
        self._memo: OrderedDict[bytes, bytes] = OrderedDict()
        self._bytes = 0
        # Keyed by a segment's value (see `encode_keyed`): the digest and the
        # tokens, so a known segment is neither rendered nor digested again.
        self._by_key: OrderedDict[bytes, tuple[bytes, bytes]] = OrderedDict()
        self._key_bytes = 0
        self._lock = threading.Lock()

    def encode(self, text: str) -> tuple[bytes, bytes]:
        """Return the digest and packed tokens of one segment."""
        digest = _digest(text)
        with self._lock:
            packed = self._memo.get(digest)
        if packed is not None:
            return digest, packed
        ids = array.array("I", [BOUNDARY_TOKEN])
        for window in _token_ids(text):
            ids.extend(window)
        packed = ids.tobytes()
        del ids
        if self._max_entries and len(packed) <= self._max_bytes // 8:
            with self._lock:
                if digest not in self._memo:
                    self._memo[digest] = packed
                    self._bytes += len(packed)
                while len(self._memo) > self._max_entries or (
                    self._bytes > self._max_bytes
                ):
                    _, old = self._memo.popitem(last=False)  # O(1), oldest first
                    self._bytes -= len(old)
        return digest, packed

    def clear(self) -> None:
        """Forget every memoized segment."""
        with self._lock:
            self._memo.clear()
            self._bytes = 0
            self._by_key.clear()
            self._key_bytes = 0

    def encode_keyed(self, key: bytes, text: Callable[[], str]) -> tuple[bytes, bytes]:
        """`encode(text())`, memoized by `key`, which must determine the text.

        A hit skips rendering the text and digesting it: the cost is one
        dict probe on `key`. The memo has the same bounds as the text memo,
        counting the key's bytes and the tokens' bytes.
        """
        found = self._by_key.get(key)  # one C call: atomic, no lock needed
        if found is not None:
            return found
        found = self.encode(text())
        weight = len(key) + len(found[1])
        if self._max_entries and weight <= self._max_bytes // 8:
            with self._lock:
                if key not in self._by_key:
                    self._by_key[key] = found
                    self._key_bytes += weight
                while len(self._by_key) > self._max_entries or (
                    self._key_bytes > self._max_bytes
                ):
                    old_key, (_, old) = self._by_key.popitem(last=False)
                    self._key_bytes -= len(old_key) + len(old)
        return found

    @property
    def memo_bytes(self) -> int:
        """Bytes the memos hold (keys and packed tokens)."""
        with self._lock:
            return self._bytes + self._key_bytes


TOKEN_BYTES = array.array("I").itemsize

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
is new.
"""

from __future__ import annotations

import array
import hashlib
import re
import zlib
from collections import OrderedDict

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


def split_pieces(text: str) -> list[str]:
    """Split `text` into the pieces that become tokens (they join back to it)."""
    return _PIECE.findall(text)


def tokenize(text: str) -> list[int]:
    """Return the `approx-v1` token ids of `text`."""
    crc = zlib.crc32
    return [crc(piece.encode("utf-8", "surrogatepass")) for piece in split_pieces(text)]


def count_tokens(text: str) -> int:
    """Return how many `approx-v1` tokens `text` has."""
    return len(_PIECE.findall(text))


def segment_token_count(text: str) -> int:
    """Tokens one prompt segment with this canonical text contributes."""
    return 1 + count_tokens(text)


class SegmentEncoder:
    """Turns segment texts into packed token ids, memoized by content digest.

    `encode(text)` returns `(digest, packed)` where `digest` is a 16-byte
    BLAKE2b digest of the text and `packed` the segment's tokens (boundary
    token first) as native unsigned 32-bit integers. The memo keeps at most
    `max_entries` segments and forgets the oldest first; results never
    depend on what is memoized.
    """

    def __init__(self, max_entries: int = 65_536) -> None:
        if max_entries < 0:
            raise ValueError(f"max_entries must be >= 0, got {max_entries}")
        self._max_entries = max_entries
        self._memo: OrderedDict[bytes, bytes] = OrderedDict()

    def encode(self, text: str) -> tuple[bytes, bytes]:
        """Return the digest and packed tokens of one segment."""
        raw = text.encode("utf-8", "surrogatepass")
        digest = hashlib.blake2b(raw, digest_size=16).digest()
        packed = self._memo.get(digest)
        if packed is None:
            ids = array.array("I", [BOUNDARY_TOKEN])
            ids.extend(tokenize(text))
            packed = ids.tobytes()
            if self._max_entries:
                if len(self._memo) >= self._max_entries:
                    self._memo.popitem(last=False)  # O(1), oldest first
                self._memo[digest] = packed
        return digest, packed

    def clear(self) -> None:
        """Forget every memoized segment."""
        self._memo.clear()


TOKEN_BYTES = array.array("I").itemsize

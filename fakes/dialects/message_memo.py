"""Rendered messages of recent chat prompts, reused by the next request.

A harness resends the whole conversation every turn: the messages of the
previous request, then one or two new ones. Rendering a prompt costs a few
microseconds of Python per message even when every segment's tokens are
memoized, which for a conversation of thousands of messages is the bulk of
a warm request. `MessagePrefixMemo` keeps, for a few recent prompts, the
msgspec encoding of their `messages` array, where each message ends in it,
and each message's segment, digest and tokens. A new request's `messages`
is encoded once (C); the longest run of leading messages byte-identical to
a remembered prompt's is found by comparing encodings (C), and their
rendered parts are reused as whole slices: only the new messages are
visited one by one.

Byte-identical encodings mean identical JSON values (msgspec's encoding is
injective on strict JSON), so the reused parts are exactly what rendering
the messages again would give. `render_messages` renders a request's
messages through the memo (`ChatDialect.render` puts the tools first).
The memo is bounded by `max_prompts` and by `max_bytes` of encodings it
holds (the newest prompt is always kept unless it alone is larger). Safe
to call from several threads.
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass

import msgspec

from reqfold.fakes.dialects import openai_chat
from reqfold.fakes.jsontypes import JsonValue
from reqfold.fakes.prompt import Segment, json_value_key, renderer
from reqfold.fakes.tokenizer import TOKEN_BYTES, SegmentEncoder

DEFAULT_MAX_PROMPTS = 8
DEFAULT_MAX_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True, kw_only=True)
class RenderedMessages:
    """The rendered messages of one prompt, position by position."""

    encoded: bytes  # msgspec encoding of the `messages` array
    offsets: list[int]  # where message i ends in `encoded`
    segments: list[Segment]  # one per message
    digests: list[bytes]
    packed: list[bytes]
    ends: list[int]  # token end offsets, relative to the first message


class MessagePrefixMemo:
    """The rendered messages of the last few chat prompts."""

    def __init__(
        self, max_prompts: int = DEFAULT_MAX_PROMPTS, max_bytes: int = DEFAULT_MAX_BYTES
    ) -> None:
        if max_prompts < 0 or max_bytes < 0:
            raise ValueError("max_prompts and max_bytes must be >= 0")
        self.max_prompts = max_prompts
        self.max_bytes = max_bytes
        self._recent: deque[RenderedMessages] = deque()
        self._bytes = 0
        self._lock = threading.Lock()

    @property
    def held_bytes(self) -> int:
        """Bytes of encodings held."""
        with self._lock:
            return self._bytes

    def __len__(self) -> int:
        with self._lock:
            return len(self._recent)

    def match(self, encoded: bytes) -> tuple[int, RenderedMessages | None]:
        """The most leading messages of `encoded` a remembered prompt shares.

        Returns `(count, prompt)`; `(0, None)` when none shares any.
        """
        with self._lock:
            recent = list(self._recent)
        best: tuple[int, RenderedMessages | None] = (0, None)
        for known in reversed(recent):  # the newest first: usually the one
            count = _shared_messages(encoded, known)
            if count > best[0]:
                best = (count, known)
            if count == len(known.offsets):
                break
        return best

    def remember(self, rendered: RenderedMessages) -> None:
        """Keep `rendered`, forgetting the oldest prompts past the bounds."""
        size = len(rendered.encoded)
        if not self.max_prompts or size > self.max_bytes:
            return
        with self._lock:
            self._recent.append(rendered)
            self._bytes += size
            while len(self._recent) > self.max_prompts or self._bytes > self.max_bytes:
                self._bytes -= len(self._recent.popleft().encoded)

    def clear(self) -> None:
        """Forget every prompt."""
        with self._lock:
            self._recent.clear()
            self._bytes = 0


def _shared_messages(encoded: bytes, known: RenderedMessages) -> int:
    """How many leading messages `encoded` has byte for byte like `known`.

    A message's encoding ends where the next `,` or the closing `]` of the
    array begins, so equal bytes up to the end of message i mean equal
    messages 0..i. Checks the whole of `known` first (an extension), then
    searches the boundaries by halves.
    """
    offsets = known.offsets

    def shares(count: int) -> bool:
        end = offsets[count - 1]
        return encoded[end : end + 1] in (b",", b"]") and encoded.startswith(
            known.encoded[:end]
        )

    if not offsets:
        return 0
    if shares(len(offsets)):
        return len(offsets)
    low, high = 0, len(offsets) - 1  # the first `low` are shared
    while low < high:
        middle = (low + high + 1) // 2
        if shares(middle):
            low = middle
        else:
            high = middle - 1
    return low


_ENCODER = msgspec.json.Encoder()


def render_messages(
    values: list[JsonValue], encoder: SegmentEncoder, memo: MessagePrefixMemo
) -> RenderedMessages:
    """The chat messages rendered, reusing the longest remembered run."""
    encoded = _ENCODER.encode(values)
    count, known = memo.match(encoded)
    if known is None:
        segments: list[Segment] = []
        digests: list[bytes] = []
        packed: list[bytes] = []
        ends: list[int] = []
        offsets: list[int] = []
    else:
        segments = known.segments[:count]
        digests = known.digests[:count]
        packed = known.packed[:count]
        ends = known.ends[:count]
        offsets = known.offsets[:count]
    total = ends[-1] if ends else 0
    for position in range(count, len(values)):
        segment = openai_chat.chat_message_segment(position, values[position])
        value = _ENCODER.encode(values[position])
        digest, tokens = encoder.encode_keyed(
            json_value_key(segment.label, value), renderer(segment)
        )
        segments.append(segment)
        digests.append(digest)
        packed.append(tokens)
        total += len(tokens) // TOKEN_BYTES
        ends.append(total)
        # `[` or `,`, then the message: where it ends in `encoded`.
        offsets.append((offsets[-1] if offsets else 0) + 1 + len(value))
    rendered = RenderedMessages(
        encoded=encoded,
        offsets=offsets,
        segments=segments,
        digests=digests,
        packed=packed,
        ends=ends,
    )
    memo.remember(rendered)
    return rendered

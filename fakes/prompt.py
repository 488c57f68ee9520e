"""Rendered prompts: the segments a request's cacheable prefix is made of.

A dialect turns a parsed request into an ordered list of `Segment`s in the
provider's render order (tools, system, messages by default). Each segment
has a canonical text: a label (`tool:`, `user:`, ...) and the compact JSON
of the value it stands for with member order kept (providers parse JSON,
so body whitespace does not matter, but key order and every character of
every string does), or the value itself when it is a plain text.

`render_prompt` tokenizes each segment on its own (see `reqfold.fakes.tokenizer`)
and concatenates the packed tokens, recording where each segment ends.
Tokenization is memoized per segment, so a growing conversation tokenizes
only its new segments. For values parsed from strict JSON the memo is
keyed by the value's msgspec encoding, so a known segment is not even
rendered or digested again (`by_value=True`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import msgspec

from reqfold.fakes.jsontypes import JsonValue, dumps_compact
from reqfold.fakes.tokenizer import TOKEN_BYTES, SegmentEncoder

_ENCODER = msgspec.json.Encoder()


class Segment(NamedTuple):
    """One unit of the prompt prefix (a named tuple: a long prompt has
    thousands, and a tuple is the cheapest immutable value to build).

    Attributes:
        path: where the value sits in the request (`tools[0]`,
            `messages[3]`, `messages[3].content[1]`, `system`).
        message_index: index into the request's `messages`, or `None`.
        value: the JSON value the segment renders.
        label: the text the rendering starts with (`tool:`, `user:`, ...).
        verbatim: the value is a string rendered as it is, not as JSON.
        breakpoint: for Anthropic, the TTL class (`"5m"`/`"1h"`) of a
            `cache_control` marker on this segment, else `None`.
    """

    path: str
    message_index: int | None
    value: JsonValue
    label: str = ""
    verbatim: bool = False
    breakpoint: str | None = None

    @property
    def text(self) -> str:
        """The canonical text that is tokenized."""
        if self.verbatim and isinstance(self.value, str):
            return self.label + self.value
        return self.label + dumps_compact(self.value)

    def value_key(self) -> bytes:
        """Bytes that determine `text`, cheaper to make than the text.

        Precondition: the value is strict JSON (no NaN or infinities, which
        msgspec would write as `null`), as `reqfold.fakes.provider_json` parses it.
        """
        if self.verbatim and isinstance(self.value, str):
            text = self.value.encode("utf-8", "surrogatepass")
            return b"".join((_head(self.label), b"s", text))
        return json_value_key(self.label, _ENCODER.encode(self.value))


def json_value_key(label: str, encoded: bytes) -> bytes:
    """`Segment.value_key` of a JSON-rendered segment whose value's msgspec
    encoding is `encoded`."""
    return b"".join((_head(label), b"j", encoded))


def _head(label: str) -> bytes:
    head = _HEADS.get(label)
    if head is None:
        raw = label.encode("utf-8", "surrogatepass")
        head = len(raw).to_bytes(4, "little") + raw
        if len(_HEADS) < 1024:
            _HEADS[label] = head
    return head


_HEADS: dict[str, bytes] = {}
"""Encoded labels (a handful: `tool:`, `user:`, ...), to build keys fast."""


def renderer(segment: Segment) -> Callable[[], str]:
    """A function that renders `segment`'s text (called on a memo miss)."""
    return lambda: segment.text


def _value_key(segment: Segment) -> bytes:
    try:
        return segment.value_key()
    except (msgspec.EncodeError, TypeError, ValueError, OverflowError):
        return b""  # not msgspec-encodable: memoize by the text instead


@dataclass(frozen=True, slots=True, kw_only=True)
class RenderedPrompt:
    """A tokenized prompt: segments, their digests and token end offsets."""

    segments: tuple[Segment, ...]
    digests: tuple[bytes, ...]
    ends: tuple[int, ...]
    tokens: bytes

    @property
    def n_tokens(self) -> int:
        """Prompt length in tokens."""
        return len(self.tokens) // TOKEN_BYTES

    def start_of(self, position: int) -> int:
        """Token offset at which segment `position` starts."""
        return self.ends[position - 1] if position > 0 else 0


def render_prompt(
    segments: Sequence[Segment], encoder: SegmentEncoder, *, by_value: bool = False
) -> RenderedPrompt:
    """Tokenize `segments` one by one and join them into one prompt.

    `by_value` memoizes by `Segment.value_key` (values parsed from strict
    JSON only); the result is the same either way.
    """
    digests: list[bytes] = []
    parts: list[bytes] = []
    ends: list[int] = []
    total = 0
    for segment in segments:
        key = _value_key(segment) if by_value else b""
        if key:
            digest, packed = encoder.encode_keyed(key, renderer(segment))
        else:
            digest, packed = encoder.encode(segment.text)
        digests.append(digest)
        parts.append(packed)
        total += len(packed) // TOKEN_BYTES
        ends.append(total)
    return RenderedPrompt(
        segments=tuple(segments),
        digests=tuple(digests),
        ends=tuple(ends),
        tokens=b"".join(parts),
    )

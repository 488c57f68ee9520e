"""Rendered prompts: the segments a request's cacheable prefix is made of.

A dialect turns a parsed request into an ordered list of `Segment`s in the
provider's render order (tools, system, messages by default). Each segment
has a canonical text, the compact JSON of the value it stands for with
member order kept (providers parse JSON, so body whitespace does not
matter, but key order and every character of every string does).

`render_prompt` tokenizes each segment on its own (see
`fakes.tokenizer`) and concatenates the packed tokens, recording where each
segment ends. Tokenization is memoized per segment digest, so the cost of a
request is dominated by C-level hashing and joining of its bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from fakes.jsontypes import JSONValue
from fakes.tokenizer import TOKEN_BYTES, SegmentEncoder


@dataclass(frozen=True, slots=True, kw_only=True)
class Segment:
    """One unit of the prompt prefix.

    Attributes:
        path: where the value sits in the request (`tools[0]`,
            `messages[3]`, `messages[3].content[1]`, `system`).
        message_index: index into the request's `messages`, or `None`.
        value: the JSON value the segment renders (used for diagnostics).
        text: the canonical text that is tokenized.
        breakpoint: for Anthropic, the TTL class (`"5m"`/`"1h"`) of a
            `cache_control` marker on this segment, else `None`.
    """

    path: str
    message_index: int | None
    value: JSONValue
    text: str
    breakpoint: str | None = None


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
    segments: Sequence[Segment], encoder: SegmentEncoder
) -> RenderedPrompt:
    """Tokenize `segments` one by one and join them into one prompt."""
    digests: list[bytes] = []
    parts: list[bytes] = []
    ends: list[int] = []
    total = 0
    for segment in segments:
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

"""Per-request cache diagnostics: why a prompt did or did not hit.

No real provider says *why* a request missed. The fake keeps a small ledger
per cache partition and, for every request, finds the **closest earlier
request**: the one sharing the longest run of identical leading segments
(ties go to the most recent). It then reports how the new request relates
to it:

- `first`: no earlier request in this partition;
- `repeat`: every segment of the new request equals an earlier request's;
- `append`: the new request starts with all segments of the closest one,
  then adds more (the append-only case a stable harness produces);
- `diverged`: the two differ at some segment; `divergence` names the
  first differing field, the character offset inside it, and a short
  excerpt of both sides.

For `append`, the ledger also compares the first appended assistant
message with the reply the fake itself sent to the closest request
(`echo_divergence`): a harness that re-renders the assistant turn
differently (other content, ids or argument bytes) loses the cache there.

Implementation: segment-chain digests `c(k+1) = H(c(k) || digest(k))` map
to the latest request containing that prefix, so finding the closest
request costs one dict probe per segment, never a scan of earlier requests.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import AnyStr, Literal, NotRequired, TypedDict

from reqfold.fakes.jsontypes import JsonObject, JsonValue, dumps_compact
from reqfold.fakes.prompt import RenderedPrompt, Segment

Relation = Literal["first", "repeat", "append", "diverged"]

EXCERPT_BEFORE = 24
EXCERPT_AFTER = 40


class Divergence(TypedDict):
    """Where a request first differs from an earlier one (wire shape)."""

    segment: str
    message_index: int | None
    field: str
    char_offset: int
    segment_token_offset: int
    earlier: str
    current: str
    cause: NotRequired[str]
    """`"content shape"` when the two segments differ only in how a text is
    written: a string `content` against one text part with that text (the
    chat dialects render them differently; docs/fake-provider.md)."""


class Diagnostic(TypedDict):
    """The per-request diagnostic the fake records and serves (wire shape)."""

    prompt_tokens: int
    cached_tokens: int
    uncached_tokens: int
    matched_tokens: int
    lost_tokens: int
    relation: Relation
    closest_request: int | None
    shared_tokens: int
    divergence: Divergence | None
    echo_divergence: Divergence | None
    provider: NotRequired[JsonObject]
    """What the provider's own cache diagnostics answered, in its words
    (`{"diagnostics": ...}` or `{"prompt_cache_diagnostics": ...}`); only
    when the request asked for them."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Comparison:
    """How one request relates to the closest earlier request."""

    relation: Relation
    closest_request: int | None
    shared_segments: int
    shared_tokens: int
    divergence: Divergence | None
    echo_divergence: Divergence | None


def segment_chain(root: bytes, digests: tuple[bytes, ...]) -> list[bytes]:
    """`[root, c(0), c(1), ...]`: entry k+1 covers partition and segments 0..k."""
    blake = hashlib.blake2b
    keys = [root]
    key = root
    for digest in digests:
        key = blake(key + digest, digest_size=16).digest()
        keys.append(key)
    return keys


DEFAULT_LEDGER_BYTES = 64 * 1024 * 1024
"""Default bound on the request bytes the ledger remembers (64 MiB)."""


class DivergenceLedger:
    """Remembers earlier prompts per partition to explain new ones.

    It keeps each request's segments (their values, not their rendered
    text) and chain keys. `max_bytes` bounds the sum of the remembered
    requests' weights (the caller passes the raw body size): past it the
    oldest requests are forgotten (counted in `forgotten`), and a later
    request is then compared only with the requests still remembered.
    The newest request is always remembered.
    """

    def __init__(self, max_bytes: int | None = DEFAULT_LEDGER_BYTES) -> None:
        if max_bytes is not None and max_bytes < 0:
            raise ValueError(f"max_bytes must be >= 0, got {max_bytes}")
        self.max_bytes = max_bytes
        self._latest: dict[bytes, tuple[int, int]] = {}
        self._segments: dict[int, tuple[Segment, ...]] = {}
        self._emitted: dict[bytes, JsonValue] = {}
        self._kept: OrderedDict[int, tuple[list[bytes], int]] = OrderedDict()
        self._bytes = 0
        self.forgotten = 0

    def clear(self) -> None:
        """Forget every earlier request."""
        self._latest.clear()
        self._segments.clear()
        self._emitted.clear()
        self._kept.clear()
        self._bytes = 0
        self.forgotten = 0

    def compare(
        self, root: bytes, prompt: RenderedPrompt, chain: list[bytes] | None = None
    ) -> Comparison:
        """Relate `prompt` to the closest earlier request of partition `root`.

        `chain` is `segment_chain(root, prompt.digests)` if already made.
        """
        if chain is None:
            chain = segment_chain(root, prompt.digests)
        shared = -1
        for key in chain:
            if key not in self._latest:
                break
            shared += 1
        n = len(prompt.segments)
        if shared < 0:
            return Comparison(
                relation="first",
                closest_request=None,
                shared_segments=0,
                shared_tokens=0,
                divergence=None,
                echo_divergence=None,
            )
        index, earlier_length = self._latest[chain[shared]]
        shared_tokens = prompt.start_of(shared) if shared < n else prompt.n_tokens
        if shared == n:
            relation: Relation = "repeat"
            divergence = echo = None
        elif earlier_length == shared:
            relation = "append"
            divergence = None
            echo = self._echo_divergence(chain[shared], prompt, shared)
        else:
            relation = "diverged"
            earlier = self._segments[index][shared]
            divergence = describe_divergence(
                earlier, prompt.segments[shared], prompt.start_of(shared)
            )
            echo = None
        return Comparison(
            relation=relation,
            closest_request=index,
            shared_segments=max(shared, 0),
            shared_tokens=shared_tokens,
            divergence=divergence,
            echo_divergence=echo,
        )

    def _echo_divergence(
        self, key: bytes, prompt: RenderedPrompt, position: int
    ) -> Divergence | None:
        emitted = self._emitted.get(key)
        segment = prompt.segments[position]
        items = emitted.get(ECHOED_ITEMS) if isinstance(emitted, dict) else None
        if isinstance(items, list):
            return items_echo_divergence(items, prompt.segments, prompt.ends, position)
        if emitted is None or not isinstance(segment.value, dict):
            return None
        if segment.value.get("role") != "assistant":
            return None
        echoed = _normal_echo(
            {name: segment.value.get(name) for name in emitted_fields(emitted)}
        )
        expected = _normal_echo(
            {name: emitted[name] for name in emitted_fields(emitted)}
            if isinstance(emitted, dict)
            else emitted
        )
        if echoed == expected:
            return None
        mine = Segment(
            path=segment.path,
            message_index=segment.message_index,
            value=expected,
        )
        theirs = Segment(
            path=segment.path,
            message_index=segment.message_index,
            value=echoed,
        )
        return describe_divergence(mine, theirs, prompt.start_of(position))

    def segments_of(self, index: int) -> tuple[Segment, ...]:
        """The segments of earlier request `index` (empty if unknown)."""
        return self._segments.get(index, ())

    def record(
        self,
        root: bytes,
        index: int,
        prompt: RenderedPrompt,
        emitted: JsonValue = None,
        *,
        weight: int = 0,
        chain: list[bytes] | None = None,
    ) -> None:
        """Remember request `index` and the assistant message it was sent back.

        `weight` counts against `max_bytes` (the request's body size);
        `chain` is `segment_chain(root, prompt.digests)` if already made.
        """
        if chain is None:
            chain = segment_chain(root, prompt.digests)
        n = len(prompt.segments)
        for key in chain:
            self._latest[key] = (index, n)
        # Segments hold values, not their rendered text.
        self._segments[index] = prompt.segments
        if emitted is not None:
            self._emitted[chain[-1]] = emitted
        self._kept[index] = (chain, weight)
        self._bytes += weight
        while (
            self.max_bytes is not None
            and self._bytes > self.max_bytes
            and len(self._kept) > 1
        ):
            self._forget_oldest()

    def _forget_oldest(self) -> None:
        index, (chain, weight) = self._kept.popitem(last=False)
        self._bytes -= weight
        self.forgotten += 1
        self._segments.pop(index, None)
        for key in chain:
            latest = self._latest.get(key)
            if latest is not None and latest[0] == index:
                del self._latest[key]
                self._emitted.pop(key, None)


ECHOED_ITEMS = "output"
"""An emitted answer made of items (the Responses API) lists them here."""
ECHO_KINDS = ("message", "function_call")
"""Item types an echo of an answer is compared on."""


def items_echo_divergence(
    expected: list[JsonValue],
    segments: Sequence[Segment],
    ends: Sequence[int],
    position: int,
) -> Divergence | None:
    """The first appended answer item that differs from the one the fake
    sent: the segments from `position` on (`ends`: their token end
    offsets), as long as they are answer items (assistant messages,
    function calls; reasoning items are passed by)."""
    wanted = iter(expected)
    for at in range(position, len(segments)):
        segment = segments[at]
        value = segment.value
        kind = value.get("type") if isinstance(value, dict) else None
        if kind == "reasoning":
            continue
        if kind not in ECHO_KINDS:
            return None
        want = next(wanted, None)
        if want is None:
            return None
        if not _same(want, value):
            mine = Segment(
                path=segment.path, message_index=segment.message_index, value=want
            )
            return describe_divergence(mine, segment, ends[at - 1] if at else 0)
    return None


def emitted_fields(emitted: JsonValue) -> list[str]:
    """The fields of an emitted assistant message an echo must reproduce."""
    if not isinstance(emitted, dict):
        return []
    return [key for key in emitted if key != "role"]


def _normal_echo(message: JsonValue) -> JsonValue:
    # `content: null` and `content: ""` render the same empty turn.
    if isinstance(message, dict) and message.get("content") in (None, ""):
        return {**message, "content": ""}
    return message


def describe_divergence(
    earlier: Segment, current: Segment, segment_token_offset: int
) -> Divergence:
    """Name the first field where two segments at the same position differ."""
    field, offset, left, right = _first_difference(
        earlier.value, current.value, current.path
    )
    if field == current.path and earlier.path != current.path:
        field = f"{earlier.path} -> {current.path}"
    divergence = Divergence(
        segment=current.path,
        message_index=current.message_index,
        field=field,
        char_offset=offset,
        segment_token_offset=segment_token_offset,
        earlier=left,
        current=right,
    )
    if _same(_one_shape(earlier.value), _one_shape(current.value)):
        divergence["cause"] = "content shape"
    return divergence


def _one_shape(value: JsonValue) -> JsonValue:
    """`value` with every string `content` written as its one text part."""
    if isinstance(value, dict):
        return {
            key: (
                [{"type": "text", "text": item}]
                if key == "content" and isinstance(item, str)
                else _one_shape(item)
            )
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_one_shape(item) for item in value]
    return value


def _excerpt(text: str, offset: int) -> str:
    start = max(0, offset - EXCERPT_BEFORE)
    head = "…" if start > 0 else ""
    tail = "…" if offset + EXCERPT_AFTER < len(text) else ""
    return head + text[start : offset + EXCERPT_AFTER] + tail


def common_prefix(a: AnyStr, b: AnyStr) -> int:
    """Length of the longest common prefix of two strings or two byte strings
    (the cache judgement measures packed tokens with it too)."""
    low, high = 0, min(len(a), len(b))
    # Binary search on slices: O(n) character comparisons in C.
    while low < high:
        mid = (low + high + 1) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid - 1
    return low


def _first_difference(
    a: JsonValue, b: JsonValue, path: str
) -> tuple[str, int, str, str]:
    if isinstance(a, dict) and isinstance(b, dict):
        a_keys, b_keys = list(a), list(b)
        for position in range(max(len(a_keys), len(b_keys))):
            if position >= len(a_keys) or position >= len(b_keys):
                break
            key_a, key_b = a_keys[position], b_keys[position]
            if key_a != key_b:
                return _texts(a, b, path)
            if not _same(a[key_a], b[key_b]):
                return _first_difference(a[key_a], b[key_b], f"{path}.{key_a}")
        return _texts(a, b, path)
    if isinstance(a, list) and isinstance(b, list):
        for position, (item_a, item_b) in enumerate(zip(a, b, strict=False)):
            if not _same(item_a, item_b):
                return _first_difference(item_a, item_b, f"{path}[{position}]")
        return _texts(a, b, path)
    if isinstance(a, str) and isinstance(b, str):
        offset = common_prefix(a, b)
        return path, offset, _excerpt(a, offset), _excerpt(b, offset)
    return _texts(a, b, path)


def _same(a: JsonValue, b: JsonValue) -> bool:
    # Order-sensitive: dict equality ignores member order, the cache does not.
    return dumps_compact(a) == dumps_compact(b)


def _texts(a: JsonValue, b: JsonValue, path: str) -> tuple[str, int, str, str]:
    left, right = dumps_compact(a), dumps_compact(b)
    offset = common_prefix(left, right)
    return path, offset, _excerpt(left, offset), _excerpt(right, offset)


def make_diagnostic(
    prompt: RenderedPrompt,
    cached: int,
    matched: int,
    expected: int,
    comparison: Comparison,
) -> Diagnostic:
    """Assemble the per-request diagnostic."""
    return Diagnostic(
        prompt_tokens=prompt.n_tokens,
        cached_tokens=cached,
        uncached_tokens=prompt.n_tokens - cached,
        matched_tokens=matched,
        lost_tokens=max(0, expected - cached),
        relation=comparison.relation,
        closest_request=comparison.closest_request,
        shared_tokens=comparison.shared_tokens,
        divergence=comparison.divergence,
        echo_divergence=comparison.echo_divergence,
    )

"""The prefix cache index: chained block hashes with TTL and LRU eviction.

Theory of operation (modelled on vLLM's automatic prefix caching):

- A prompt is a sequence of token ids. It is cut into full blocks of
  `block_size` tokens; a trailing partial block is never cached.
- Block k's key is `H(key(k-1) || tokens of block k)` with `key(-1)` the
  *partition root*, a digest of everything that isolates caches (dialect,
  model, API key, isolation fields). Because every key covers the whole
  prefix before it, a flat dict suffices: no tree, and a hit on block k
  implies the prompt matches the cached one up to the end of block k.
- Lookup walks the keys from the first block and stops at the first key
  that is absent or expired; the match is the number of blocks walked.
- Insert adds (or refreshes) every key of the prompt. Keys are touched
  deepest first and root last, so the least recently used end of the LRU
  order holds the tails of old prompts, and eviction removes a prompt's
  deepest blocks before its shared head (the reason vLLM frees blocks in
  reverse order). Keys orphaned by eviction are harmless: a lookup stops
  before reaching them.
- An entry expires `ttl` seconds after it was last used (refreshed by hits
  when `refresh_on_hit`) and, if `max_age` is set, `max_age` seconds after
  it was created. Expired entries are deleted lazily.
- Capacity is counted in tokens (each entry weighs its `size`); inserting
  past capacity evicts least recently used entries.

The same index stores the Anthropic dialect's breakpoint entries, whose keys
are segment-chain digests and whose sizes are their prefix lengths.

Cost per request: one hash per new block (`reqfold.fakes.block_memo` remembers the
keys of known prefixes) and O(T / block) dict operations in one pass
(`account_chain`). Nothing here reads a clock: `now` is an argument.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from reqfold.fakes.tokenizer import TOKEN_BYTES


@dataclass(slots=True)
class Entry:
    """One cached prefix: its length in tokens, weight and lifetime data."""

    end: int
    size: int
    created_at: float
    last_used: float
    ttl: float | None


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexStats:
    """Counters of one index since its last reset."""

    entries: int
    cached_tokens: int
    evicted_entries: int
    expired_entries: int


def partition_root(*parts: str) -> bytes:
    """Digest of the parts that isolate one cache from another."""
    hasher = hashlib.blake2b(digest_size=16, person=b"reqfold-part")
    for part in parts:
        raw = part.encode("utf-8", "surrogatepass")
        hasher.update(len(raw).to_bytes(8, "little"))
        hasher.update(raw)
    return hasher.digest()


def block_keys(
    root: bytes, tokens: bytes, block_size: int, *, first: int = 0
) -> list[bytes]:
    """Chained keys of every full block of packed `tokens`, from block `first`.

    `tokens` holds native unsigned 32-bit ids (see `reqfold.fakes.tokenizer`);
    `root` is the key before block `first` (the partition root for 0).
    """
    if block_size < 1:
        raise ValueError(f"block_size must be >= 1, got {block_size}")
    width = block_size * TOKEN_BYTES
    blake = hashlib.blake2b
    keys: list[bytes] = []
    key = root
    view = memoryview(tokens)
    for start in range(first * width, len(tokens) - width + 1, width):
        key = blake(key + view[start : start + width], digest_size=16).digest()
        keys.append(key)
    return keys


class PrefixCacheIndex:
    """An LRU, TTL-bounded map from chained prefix keys to cache entries."""

    def __init__(
        self,
        *,
        capacity_tokens: int | None = None,
        refresh_on_hit: bool = True,
        max_age: float | None = None,
    ) -> None:
        if capacity_tokens is not None and capacity_tokens < 0:
            raise ValueError(f"capacity_tokens must be >= 0, got {capacity_tokens}")
        self.capacity_tokens = capacity_tokens
        self.refresh_on_hit = refresh_on_hit
        self.max_age = max_age
        self._entries: OrderedDict[bytes, Entry] = OrderedDict()
        self._weight = 0
        self._evicted = 0
        self._expired = 0

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def _alive(self, key: bytes, now: float) -> Entry | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        dead = (entry.ttl is not None and now >= entry.last_used + entry.ttl) or (
            self.max_age is not None and now >= entry.created_at + self.max_age
        )
        if dead:
            del self._entries[key]
            self._weight -= entry.size
            self._expired += 1
            return None
        return entry

    def get(self, key: bytes, now: float) -> Entry | None:
        """Return the live entry for `key` (no touch), dropping it if expired."""
        return self._alive(key, now)

    def match_chain(self, keys: Sequence[bytes], now: float) -> int:
        """Return how many leading `keys` are live entries (stops at a miss)."""
        matched = 0
        for key in keys:
            if self._alive(key, now) is None:
                break
            matched += 1
        return matched

    def insert_chain(
        self,
        keys: Sequence[bytes],
        ends: Sequence[int],
        sizes: Sequence[int],
        now: float,
        ttl: float | None,
    ) -> None:
        """Insert or refresh `keys`, touching them deepest first, root last."""
        for position in range(len(keys) - 1, -1, -1):
            self.put(keys[position], ends[position], sizes[position], now, ttl)
        self._evict()

    def account_chain(
        self,
        keys: Sequence[bytes],
        block_size: int,
        now: float,
        ttl: float | None,
        *,
        insert: bool,
    ) -> int:
        """`match_chain(keys)`, then `insert_chain` of the blocks if `insert`.

        The same outcome as matching, touching the hits and inserting (the
        same entries, counters and LRU order) in one pass, deepest key
        first: the insert refreshes every key, the hits among them. Without
        `insert` nothing is touched (the provider reports no hit for a
        prompt too short to be written). Returns how many leading keys were
        live entries.
        """
        if not insert:
            return self.match_chain(keys, now)
        entries = self._entries
        get, move = entries.get, entries.move_to_end
        max_age, refresh = self.max_age, self.refresh_on_hit
        matched = len(keys)
        for position in range(len(keys) - 1, -1, -1):
            key = keys[position]
            entry = get(key)
            if entry is not None and (
                (entry.ttl is not None and now >= entry.last_used + entry.ttl)
                or (max_age is not None and now >= entry.created_at + max_age)
            ):
                del entries[key]
                self._weight -= entry.size
                self._expired += 1
                entry = None
            if entry is None:
                matched = position
                entries[key] = Entry(
                    end=(position + 1) * block_size,
                    size=block_size,
                    created_at=now,
                    last_used=now,
                    ttl=ttl,
                )
                self._weight += block_size
            else:
                if refresh:
                    entry.last_used = now
                entry.ttl = ttl
                move(key)
        self._evict()
        return matched

    def put(
        self,
        key: bytes,
        end: int,
        size: int,
        now: float,
        ttl: float | None,
        *,
        merge_ttl: bool = False,
    ) -> None:
        """Insert or refresh one entry and make it the most recently used.

        A refresh sets the entry's TTL to `ttl` (so lowering the configured
        TTL takes effect on entries that keep being hit), or with
        `merge_ttl` keeps the longer of the two (Anthropic TTL classes: a
        5-minute write never shortens a 1-hour entry). `None` is forever.
        """
        entry = self._alive(key, now)
        if entry is None:
            self._entries[key] = Entry(
                end=end, size=size, created_at=now, last_used=now, ttl=ttl
            )
            self._weight += size
            return
        if self.refresh_on_hit:
            entry.last_used = now
        longer = ttl is None or (entry.ttl is not None and ttl > entry.ttl)
        if longer or not merge_ttl:
            entry.ttl = ttl
        self._entries.move_to_end(key)

    def touch(self, key: bytes, now: float) -> None:
        """Mark a hit: refresh the entry's lifetime (if configured) and LRU place."""
        entry = self._entries.get(key)
        if entry is None:
            return
        if self.refresh_on_hit:
            entry.last_used = now
        self._entries.move_to_end(key)

    def evict(self) -> None:
        """Evict least recently used entries until the index fits its capacity."""
        self._evict()

    def _evict(self) -> None:
        if self.capacity_tokens is None:
            return
        while self._weight > self.capacity_tokens and self._entries:
            _, entry = self._entries.popitem(last=False)
            self._weight -= entry.size
            self._evicted += 1

    def clear(self) -> None:
        """Drop every entry and zero the counters."""
        self._entries.clear()
        self._weight = 0
        self._evicted = 0
        self._expired = 0

    def stats(self) -> IndexStats:
        """Return the index counters."""
        return IndexStats(
            entries=len(self._entries),
            cached_tokens=self._weight,
            evicted_entries=self._evicted,
            expired_entries=self._expired,
        )

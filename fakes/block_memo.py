"""Block keys of recent prompts, so an extension hashes only its new blocks.

A chat prompt's cache keys chain over its token blocks (see
`reqfold.fakes.cache_index.block_keys`): key k covers everything before it. Two
prompts whose first segments are identical have identical tokens up to the
end of those segments, so they share every key of a block that ends there.
`BlockKeyMemo` remembers the keys of recent prompts under the block size
and the digest of each of their segment prefixes (the partition root and
the segment digests, chained: `reqfold.fakes.diagnostics.segment_chain`), and a
new prompt starts hashing at the first block that its deepest remembered
segment prefix does not cover. A warm request that appends to the
previous one hashes only the blocks after the old end. A prompt remembers
only the prefixes it adds (the shorter ones are remembered by the prompts
that added them), so its cost follows its new segments too.

The memo is a cache of a pure function: `keys` returns what `block_keys`
would return, whatever the memo holds. Its memory is bounded by
`max_blocks` keys over the prompts it remembers (older prompts are
forgotten first; a prompt of more keys than that is not remembered). Safe
to call from several threads.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from reqfold.fakes.cache_index import block_keys
from reqfold.fakes.diagnostics import segment_chain
from reqfold.fakes.prompt import RenderedPrompt

DEFAULT_MAX_BLOCKS = 1 << 19
"""Default bound: about 30 MB of keys (a 200k-token prompt of 64-token
blocks has 3,125 keys)."""

Prefix = tuple[int, bytes]  # (block size, segment-prefix digest)


class BlockKeyMemo:
    """Block keys by segment prefix, for prompts seen recently."""

    def __init__(self, max_blocks: int = DEFAULT_MAX_BLOCKS) -> None:
        if max_blocks < 0:
            raise ValueError(f"max_blocks must be >= 0, got {max_blocks}")
        self.max_blocks = max_blocks
        self._by_prefix: dict[Prefix, list[bytes]] = {}
        self._prompts: OrderedDict[int, tuple[list[Prefix], list[bytes]]] = (
            OrderedDict()
        )
        self._blocks = 0
        self._serial = 0
        self._lock = threading.Lock()
        self.hashed_blocks = 0
        """Blocks hashed so far: the ones the memo could not reuse."""

    @property
    def blocks(self) -> int:
        """Keys held for the remembered prompts (each prompt counted whole)."""
        with self._lock:
            return self._blocks

    def __len__(self) -> int:
        """How many prompts are remembered."""
        with self._lock:
            return len(self._prompts)

    def keys(
        self,
        root: bytes,
        prompt: RenderedPrompt,
        block_size: int,
        chain: list[bytes] | None = None,
    ) -> list[bytes]:
        """`block_keys(root, prompt.tokens, block_size)`, reusing a known prefix.

        `chain` is `segment_chain(root, prompt.digests)` if already made.
        """
        if chain is None:
            chain = segment_chain(root, prompt.digests)
        # chain[k + 1] covers segments 0..k; probe from the deepest.
        reused: list[bytes] = []
        start = 0  # segments whose prefixes this prompt remembers
        with self._lock:
            for position in range(len(chain) - 2, -1, -1):
                known = self._by_prefix.get((block_size, chain[position + 1]))
                if known is not None:
                    reused = known[: prompt.ends[position] // block_size]
                    start = position + 1
                    break
        before = reused[-1] if reused else root
        fresh = block_keys(before, prompt.tokens, block_size, first=len(reused))
        keys = reused + fresh
        # The shorter prefixes are remembered by the prompts that added them.
        prefixes = [(block_size, key) for key in chain[start + 1 :]]
        with self._lock:
            self.hashed_blocks += len(fresh)
            self._remember(prefixes, keys)
        return keys

    def _remember(self, prefixes: list[Prefix], keys: list[bytes]) -> None:
        if len(keys) > self.max_blocks:
            return
        serial = self._serial
        self._serial += 1
        for prefix in prefixes:
            self._by_prefix[prefix] = keys
        self._prompts[serial] = (prefixes, keys)
        self._blocks += len(keys)
        while self._blocks > self.max_blocks:
            _, (old_prefixes, old_keys) = self._prompts.popitem(last=False)
            self._blocks -= len(old_keys)
            for prefix in old_prefixes:
                if self._by_prefix.get(prefix) is old_keys:
                    del self._by_prefix[prefix]

    def clear(self) -> None:
        """Forget every prompt."""
        with self._lock:
            self._by_prefix.clear()
            self._prompts.clear()
            self._blocks = 0

from __future__ import annotations

import array

import pytest
from hypothesis import given, strategies as st

from reqfold.fakes.cache_index import PrefixCacheIndex, block_keys, partition_root


def packed(ids: list[int]) -> bytes:
    return array.array("I", ids).tobytes()


ROOT = partition_root("deepseek", "model", "key")


def insert(
    index: PrefixCacheIndex,
    keys: list[bytes],
    now: float,
    ttl: float | None = None,
    size: int = 4,
) -> None:
    index.insert_chain(
        keys, [(k + 1) * size for k in range(len(keys))], [size] * len(keys), now, ttl
    )


def test_block_keys_cover_only_full_blocks():
    assert len(block_keys(ROOT, packed(list(range(11))), 4)) == 2
    assert block_keys(ROOT, packed([]), 4) == []


def test_a_block_key_depends_on_everything_before_it():
    a = block_keys(ROOT, packed([1, 2, 3, 4, 5, 6, 7, 8]), 4)
    b = block_keys(ROOT, packed([9, 2, 3, 4, 5, 6, 7, 8]), 4)
    assert a[0] != b[0]
    assert a[1] != b[1]  # same tokens in block 2, different parent


def test_partitions_never_share_keys():
    tokens = packed(list(range(8)))
    other = partition_root("deepseek", "model", "other-key")
    assert set(block_keys(ROOT, tokens, 4)).isdisjoint(block_keys(other, tokens, 4))


def test_match_stops_at_the_first_missing_block():
    index = PrefixCacheIndex()
    keys = block_keys(ROOT, packed(list(range(16))), 4)
    insert(index, keys[:2], now=0)
    assert index.match_chain(keys, now=0) == 2
    index.clear()
    insert(index, keys[1:], now=0)
    assert index.match_chain(keys, now=0) == 0


def test_entries_expire_ttl_seconds_after_their_last_use():
    index = PrefixCacheIndex(refresh_on_hit=True)
    keys = block_keys(ROOT, packed(list(range(8))), 4)
    insert(index, keys, now=0, ttl=300)
    assert index.match_chain(keys, now=299.9) == 2
    insert(index, keys, now=299.9, ttl=300)  # refreshed by use
    assert index.match_chain(keys, now=599) == 2
    assert index.match_chain(keys, now=599.9) == 0
    assert index.stats().expired_entries == 1  # deleted lazily, first miss stops


def test_max_age_caps_lifetime_even_when_entries_are_used():
    index = PrefixCacheIndex(max_age=3600)
    keys = block_keys(ROOT, packed(list(range(4))), 4)
    for now in range(0, 3600, 300):
        insert(index, keys, now=now, ttl=600)
    assert index.match_chain(keys, now=3599) == 1
    assert index.match_chain(keys, now=3600) == 0


def test_lru_eviction_removes_a_prompts_tail_before_its_shared_head():
    index = PrefixCacheIndex(capacity_tokens=12)
    first = block_keys(ROOT, packed(list(range(16))), 4)
    insert(index, first, now=0)
    second = block_keys(ROOT, packed([*range(8), 99, 98, 97, 96]), 4)
    insert(index, second, now=1)  # shares two head blocks, adds one
    assert index.stats().cached_tokens == 12
    assert index.match_chain(second, now=2) == 3
    assert index.match_chain(first, now=2) == 2  # first's tail went first
    assert index.stats().evicted_entries == 2


@given(
    st.lists(
        st.lists(st.integers(0, 5), min_size=0, max_size=40), min_size=1, max_size=12
    ),
    st.integers(min_value=0, max_value=40),
)
def test_the_index_never_holds_more_than_its_capacity(prompts, capacity):
    index = PrefixCacheIndex(capacity_tokens=capacity)
    for now, ids in enumerate(prompts):
        insert(index, block_keys(ROOT, packed(ids), 4), now=now)
        assert index.stats().cached_tokens <= capacity


def test_negative_capacity_is_refused():
    with pytest.raises(ValueError, match="capacity_tokens"):
        PrefixCacheIndex(capacity_tokens=-1)

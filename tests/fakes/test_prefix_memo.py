"""The memos behind a warm request's cost: same answers, bounded memory.

A memo may only change how fast the fake answers: every test here compares
with the work done from scratch (no memo), or bounds what a memo holds.
"""

from __future__ import annotations

import json

import msgspec
from example_counts import scaled_examples
from hypothesis import HealthCheck, given, settings, strategies as st

from reqfold.fakes import FakeProvider, HttpRequest
from reqfold.fakes.block_memo import BlockKeyMemo
from reqfold.fakes.cache_index import PrefixCacheIndex, block_keys, partition_root
from reqfold.fakes.dialects.message_memo import MessagePrefixMemo, render_messages
from reqfold.fakes.dialects.registry import DIALECTS
from reqfold.fakes.prompt import Segment, render_prompt
from reqfold.fakes.tokenizer import SegmentEncoder

ROOT = partition_root("deepseek", "deepseek-chat", "key:test")


def post(provider: FakeProvider, messages: list[dict], key: str = "sk-test"):
    body = {"model": provider.profile.models[0], "messages": messages}
    provider.handle(
        HttpRequest(
            method="POST",
            path="/chat/completions",
            headers=(("authorization", f"Bearer {key}"),),
            body=json.dumps(body).encode(),
        )
    )
    return provider.last_request


def unmemoized(profile: str, **overrides) -> FakeProvider:
    """A provider that renders, tokenizes and hashes every request whole."""
    provider = FakeProvider(profile, **overrides)
    provider.encoder = SegmentEncoder(max_entries=0)
    provider.blocks = BlockKeyMemo(max_blocks=0)
    provider.messages = None
    return provider


def prompt_of(texts: list[str], encoder: SegmentEncoder):
    segments = [
        Segment(
            path=f"messages[{i}]",
            message_index=i,
            value={"role": "user", "content": text},
        )
        for i, text in enumerate(texts)
    ]
    return render_prompt(segments, encoder, by_value=True)


def test_an_extension_hashes_only_the_blocks_after_the_old_end():
    memo, encoder = BlockKeyMemo(), SegmentEncoder()
    first = prompt_of(["alpha " * 300, "beta " * 200], encoder)
    memo.keys(ROOT, first, 64)
    before = memo.hashed_blocks
    extended = prompt_of(["alpha " * 300, "beta " * 200, "gamma " * 150], encoder)
    keys = memo.keys(ROOT, extended, 64)
    assert keys == block_keys(ROOT, extended.tokens, 64)
    assert memo.hashed_blocks - before == len(keys) - first.n_tokens // 64
    assert memo.hashed_blocks - before < len(keys) // 2


def test_a_prompt_diverging_inside_a_remembered_prefix_reuses_only_what_precedes():
    memo, encoder = BlockKeyMemo(), SegmentEncoder()
    texts = ["alpha " * 300, "beta " * 200, "gamma " * 200]
    first = prompt_of(texts, encoder)
    memo.keys(ROOT, first, 64)
    before = memo.hashed_blocks
    edited = prompt_of([texts[0], "BETA " * 200, texts[2]], encoder)
    keys = memo.keys(ROOT, edited, 64)
    assert keys == block_keys(ROOT, edited.tokens, 64)
    assert memo.hashed_blocks - before == len(keys) - edited.ends[0] // 64


def test_a_request_diverging_inside_a_memoized_prefix_gets_the_same_answer():
    memo, scratch = FakeProvider("deepseek"), unmemoized("deepseek")
    system = {"role": "system", "content": "rules " * 400}
    turns = [{"role": "user", "content": f"question {i} " * 60} for i in range(4)]
    edited = {"role": "user", "content": "question X " * 60}
    for provider in (memo, scratch):
        post(provider, [system, *turns])
        post(provider, [system, turns[0], edited, *turns[2:]])
    assert memo.last_request.usage == scratch.last_request.usage
    assert memo.last_request.diagnostic == scratch.last_request.diagnostic
    divergence = memo.last_request.diagnostic["divergence"]
    assert divergence["field"] == "messages[2].content"
    assert memo.last_request.usage["prompt_cache_hit_tokens"] > 0


TEXTS = st.sampled_from(["alpha " * 90, "beta " * 70, "gamma " * 40, "delta", ""])
MESSAGES = st.lists(
    st.builds(
        lambda role, text: {"role": role, "content": text},
        st.sampled_from(["user", "assistant"]),
        TEXTS,
    ),
    min_size=1,
    max_size=6,
)


@settings(
    max_examples=scaled_examples(60),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    profile=st.sampled_from(["deepseek", "openai"]),
    steps=st.lists(
        st.tuples(MESSAGES, st.sampled_from([0.0, 0.0, 30.0, 400.0]), st.booleans()),
        min_size=1,
        max_size=8,
    ),
    capacity=st.sampled_from([None, 2_000]),
)
def test_memoized_and_unmemoized_providers_answer_every_sequence_alike(
    profile, steps, capacity
):
    overrides = {"ttl": 300, "capacity_tokens": capacity, "block_size": 16}
    if profile == "openai":
        overrides["min_cacheable_tokens"] = 64
    memo = FakeProvider(profile, **overrides)
    scratch = unmemoized(profile, **overrides)
    history: list[dict] = []
    for messages, advance, extend in steps:
        # Mostly extensions of the previous request, sometimes a new start.
        history = [*history, *messages] if extend else list(messages)
        for provider in (memo, scratch):
            provider.advance(advance)
            post(provider, history)
        assert memo.last_request.usage == scratch.last_request.usage
        assert memo.last_request.diagnostic == scratch.last_request.diagnostic
    assert memo.stats() == scratch.stats()


def test_the_block_memo_holds_at_most_max_blocks_keys():
    memo, encoder = BlockKeyMemo(max_blocks=100), SegmentEncoder()
    for i in range(40):
        prompt = prompt_of([f"prompt {i} " * 200], encoder)
        keys = memo.keys(ROOT, prompt, 16)
        assert keys == block_keys(ROOT, prompt.tokens, 16)
        assert memo.blocks <= 100
    assert len(memo) < 40
    huge = prompt_of(["huge " * 5_000], encoder)
    assert memo.keys(ROOT, huge, 16) == block_keys(ROOT, huge.tokens, 16)
    assert memo.blocks <= 100


def test_the_segment_memo_by_value_holds_at_most_its_bounds():
    encoder = SegmentEncoder(max_entries=8, max_bytes=64 * 1024)
    for i in range(100):
        prompt_of([f"segment {i} " * (i % 7 + 1)], encoder)
        assert encoder.memo_bytes <= 2 * 64 * 1024  # both memos, each bounded
    assert encoder.encode_keyed(b"k", lambda: "a b") == SegmentEncoder().encode("a b")


def _evictions(index: PrefixCacheIndex, keys: list[bytes], size: int) -> list[int]:
    """Positions of `keys` in the order LRU eviction removes them."""
    order: list[int] = []
    present = {i for i, key in enumerate(keys) if key in index}
    weight = index.stats().cached_tokens
    while weight > 0:
        weight -= size  # every entry weighs one block: one goes per step
        index.capacity_tokens = weight
        index.evict()
        gone = sorted(i for i in present if keys[i] not in index)
        order.extend(gone)
        present -= set(gone)
    return order


@given(
    chains=st.lists(
        st.tuples(
            st.lists(st.integers(0, 3), min_size=1, max_size=8),
            st.sampled_from([0.0, 5.0, 50.0]),
            st.sampled_from([10.0, 100.0, None]),
            st.booleans(),
        ),
        min_size=1,
        max_size=10,
    ),
    refresh=st.booleans(),
    max_age=st.sampled_from([None, 60.0]),
    capacity=st.sampled_from([None, 20, 40]),
)
def test_one_pass_accounting_equals_match_touch_and_insert(
    chains, refresh, max_age, capacity
):
    size = 4
    fused = PrefixCacheIndex(
        capacity_tokens=capacity, refresh_on_hit=refresh, max_age=max_age
    )
    stepwise = PrefixCacheIndex(
        capacity_tokens=capacity, refresh_on_hit=refresh, max_age=max_age
    )
    now = 0.0
    every: list[bytes] = []
    for ids, advance, ttl, insert in chains:
        now += advance
        tokens = b"".join(i.to_bytes(4, "little") * size for i in ids)
        keys = block_keys(ROOT, tokens, size)
        every.extend(key for key in keys if key not in every)
        matched = fused.account_chain(keys, size, now, ttl, insert=insert)
        expected = stepwise.match_chain(keys, now)
        if insert:  # the provider reports hits only for a prompt it writes
            for key in keys[:expected]:
                stepwise.touch(key, now)
            ends = [(p + 1) * size for p in range(len(keys))]
            stepwise.insert_chain(keys, ends, [size] * len(keys), now, ttl)
        assert matched == expected
        assert fused.stats() == stepwise.stats()
        assert [key in fused for key in every] == [key in stepwise for key in every]
    assert _evictions(fused, every, size) == _evictions(stepwise, every, size)


def _chat_body(messages: list[dict]) -> dict:
    return {"model": "deepseek-chat", "messages": messages}


def test_an_extension_renders_only_its_new_messages():
    provider = FakeProvider("deepseek")
    history = [{"role": "user", "content": f"turn {i} " * 20} for i in range(50)]
    post(provider, history)
    memo = provider.messages
    assert memo is not None
    extended = [*history, {"role": "assistant", "content": "new"}]
    encoded = msgspec.json.encode(extended)
    count, known = memo.match(encoded)
    assert count == 50
    assert known is not None
    assert known.encoded == msgspec.json.encode(history)
    # Sent, the extension's rendered prompt is the one rendered from scratch.
    post(provider, extended)
    from_scratch = render_prompt(
        provider.prompt_segments(_chat_body(extended)), SegmentEncoder(max_entries=0)
    )
    chat = DIALECTS["deepseek"]
    again = chat.render(  # the memoized path, once more
        chat.parse(_chat_body(extended)),
        provider.profile,
        provider.encoder,
        memo,
    )
    assert again == from_scratch


def test_messages_diverging_inside_a_remembered_run_share_only_what_precedes():
    memo = MessagePrefixMemo()
    encoder = SegmentEncoder()
    history = [{"role": "user", "content": f"turn {i}"} for i in range(40)]
    render_messages(history, encoder, memo)
    for edited_at in (0, 1, 17, 39):
        edited = [dict(message) for message in history]
        edited[edited_at]["content"] += "!"
        count, _ = memo.match(msgspec.json.encode(edited))
        assert count == edited_at
    # A message whose encoding extends an earlier one's is not shared.
    longer = [*history[:5], {"role": "user", "content": "turn 5 and more"}]
    assert memo.match(msgspec.json.encode(longer))[0] == 5


def test_the_message_memo_holds_at_most_its_bounds():
    memo = MessagePrefixMemo(max_prompts=3, max_bytes=4_000)
    encoder = SegmentEncoder()
    for i in range(20):
        messages = [{"role": "user", "content": f"prompt {i} " * (i % 5 + 1)}]
        render_messages(messages * 10, encoder, memo)
        assert len(memo) <= 3
        assert memo.held_bytes <= 4_000
    render_messages([{"role": "user", "content": "x" * 5_000}], encoder, memo)
    assert memo.held_bytes <= 4_000

"""Cache accounting of the provider core: golden vectors and laws."""

from __future__ import annotations

import json

import pytest
from example_counts import scaled_examples
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from reqfold.fakes import FakeProvider, HttpRequest, Reply
from reqfold.fakes.prompt import render_prompt
from reqfold.fakes.tokenizer import TOKEN_BYTES


def words(count: int, word: str = "x") -> str:
    return " ".join([word] * count)


def post(
    provider: FakeProvider,
    body: object,
    key: str = "sk-test",
    path: str = "/chat/completions",
):
    plan = provider.handle(
        HttpRequest(
            method="POST",
            path=path,
            headers=(
                ("authorization", f"Bearer {key}"),
                ("content-type", "application/json"),
            ),
            body=json.dumps(body).encode(),
        )
    )
    return plan, provider.last_request


def sized(
    provider: FakeProvider,
    total: int,
    history: list[dict] | None = None,
    model: str | None = None,
) -> dict:
    """A chat body of exactly `total` prompt tokens, ending in a user message
    (for `model`, by default the first the provider serves)."""
    messages = [*(history or []), {"role": "user", "content": ""}]
    body = {"model": model or provider.profile.models[0], "messages": messages}
    overhead = provider.count_prompt_tokens(body)
    assert total > overhead
    messages[-1]["content"] = words(total - overhead)
    assert provider.count_prompt_tokens(body) == total
    return body


def cached(record) -> int:
    return record.diagnostic["cached_tokens"]


# --- golden vectors (the hit rules of docs/fake-provider.md) ---------------


def test_openai_resent_2006_token_prompt_reports_1920_cached(openai):
    body = sized(openai, 2006)
    assert cached(post(openai, body)[1]) == 0
    _, record = post(openai, body)
    assert record.usage["prompt_tokens"] == 2006
    assert record.usage["prompt_tokens_details"]["cached_tokens"] == 1920


def test_openai_never_caches_a_prompt_under_1024_tokens(openai):
    body = sized(openai, 1000)
    post(openai, body)
    _, record = post(openai, body)
    assert record.usage["prompt_tokens_details"]["cached_tokens"] == 0
    longer = sized(openai, 1500, history=body["messages"])
    assert cached(post(openai, longer)[1]) == 0  # the 1000-token head was never written


@pytest.mark.parametrize(
    ("shared", "expected"), [(1151, 1024), (1152, 1152), (1280, 1280)]
)
def test_openai_hits_grow_in_128_token_steps_after_1024(openai, shared, expected):
    first = sized(openai, shared)
    post(openai, first)
    second = sized(openai, shared + 300, history=first["messages"])
    assert cached(post(openai, second)[1]) == expected


def test_deepseek_caches_64_token_blocks_and_withholds_the_last_token(deepseek):
    body = sized(deepseek, 200, model="deepseek-chat")
    post(deepseek, body)
    _, record = post(deepseek, body)
    usage = record.usage
    assert usage["prompt_cache_hit_tokens"] == 192
    assert usage["prompt_cache_miss_tokens"] == 8
    assert usage["prompt_tokens_details"]["cached_tokens"] == 192
    assert (
        usage["prompt_cache_hit_tokens"] + usage["prompt_cache_miss_tokens"]
        == usage["prompt_tokens"]
    )
    exact = sized(deepseek, 128, model="deepseek-chat")
    post(deepseek, exact)
    assert cached(post(deepseek, exact)[1]) == 64  # n - 1 = 127 floors to 64


def test_deepseek_never_caches_content_shorter_than_one_block(deepseek):
    body = sized(deepseek, 63, model="deepseek-chat")
    post(deepseek, body)
    assert cached(post(deepseek, body)[1]) == 0


def test_deepseek_a_plus_b_then_a_plus_b_plus_c_hits_a_plus_b(deepseek):
    ab = sized(deepseek, 640, model="deepseek-chat")
    post(deepseek, ab)
    abc = sized(deepseek, 900, history=ab["messages"], model="deepseek-chat")
    assert cached(post(deepseek, abc)[1]) == 640
    ac = {
        **ab,
        "messages": [*ab["messages"][:-1], {"role": "user", "content": "other"}],
    }
    _, record = post(deepseek, ac)
    assert record.diagnostic["relation"] == "diverged"
    assert record.diagnostic["divergence"]["field"] == "messages[0].content"


# --- isolation ---------------------------------------------------------------


def test_different_api_keys_never_share_cache_entries(deepseek):
    body = sized(deepseek, 500, model="deepseek-chat")
    post(deepseek, body, key="sk-alice")
    assert cached(post(deepseek, body, key="sk-bob")[1]) == 0
    assert cached(post(deepseek, body, key="sk-alice")[1]) == 448


def test_isolation_fields_separate_end_users_of_one_account(deepseek):
    body = sized(deepseek, 500, model="deepseek-chat")
    post(deepseek, {**body, "user_id": "u1"})
    assert cached(post(deepseek, {**body, "user_id": "u2"})[1]) == 0
    assert cached(post(deepseek, {**body, "user_id": "u1"})[1]) == 448


def test_models_never_share_cache_entries(deepseek):
    body = sized(deepseek, 500, model="deepseek-chat")
    post(deepseek, body)
    assert cached(post(deepseek, {**body, "model": "deepseek-reasoner"})[1]) == 0


def test_changing_a_tool_definition_invalidates_everything_after_it(deepseek):
    tool = {
        "type": "function",
        "function": {"name": "ls", "parameters": {"type": "object"}},
    }
    body = {**sized(deepseek, 400, model="deepseek-chat"), "tools": [tool]}
    post(deepseek, body)
    renamed = {
        "type": "function",
        "function": {"name": "dir", "parameters": {"type": "object"}},
    }
    _, record = post(deepseek, {**body, "tools": [renamed]})
    assert cached(record) == 0
    assert record.diagnostic["divergence"]["field"] == "tools[0].function.name"


def test_json_key_order_is_part_of_the_prefix(deepseek):
    params = {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "number"}},
    }
    swapped = {
        "type": "object",
        "properties": {"b": {"type": "number"}, "a": {"type": "string"}},
    }
    tool = {"type": "function", "function": {"name": "f", "parameters": params}}
    body = {**sized(deepseek, 400, model="deepseek-chat"), "tools": [tool]}
    post(deepseek, body)
    other = {"type": "function", "function": {"name": "f", "parameters": swapped}}
    _, record = post(deepseek, {**body, "tools": [other]})
    assert (
        record.diagnostic["divergence"]["field"]
        == "tools[0].function.parameters.properties"
    )


def test_body_whitespace_is_not_part_of_the_prefix(deepseek):
    body = sized(deepseek, 300, model="deepseek-chat")
    deepseek.handle(
        HttpRequest(
            method="POST", path="/chat/completions", body=json.dumps(body).encode()
        )
    )
    deepseek.handle(
        HttpRequest(
            method="POST",
            path="/chat/completions",
            body=json.dumps(body, indent=4).encode(),
        )
    )
    assert deepseek.last_request.diagnostic["relation"] == "repeat"
    assert cached(deepseek.last_request) == 256


# --- TTL and eviction --------------------------------------------------------


def test_deepseek_entries_expire_after_the_configured_ttl():
    provider = FakeProvider("deepseek", ttl=600)
    body = sized(provider, 300, model="deepseek-chat")
    post(provider, body)
    provider.advance(599)
    assert cached(post(provider, body)[1]) == 256
    provider.advance(599)  # refreshed by the hit at 599
    assert cached(post(provider, body)[1]) == 256
    provider.advance(600)
    _, record = post(provider, body)
    assert cached(record) == 0
    assert record.diagnostic["relation"] == "repeat"
    assert record.diagnostic["lost_tokens"] == 256


def test_lowering_the_ttl_applies_to_entries_that_keep_being_hit():
    provider = FakeProvider("deepseek", ttl=600)
    body = sized(provider, 300, model="deepseek-chat")
    post(provider, body)
    provider.configure(ttl=60)
    assert cached(post(provider, body)[1]) == 256  # a hit: refreshed with ttl 60
    provider.advance(61)
    assert cached(post(provider, body)[1]) == 0


def test_capacity_evicts_the_least_recently_used_prompt():
    provider = FakeProvider("deepseek", capacity_tokens=640)
    first = sized(provider, 400, model="deepseek-chat")
    second = sized(
        provider,
        400,
        model="deepseek-chat",
        history=[{"role": "system", "content": "b"}],
    )
    post(provider, first)
    post(provider, second)  # 384 + 384 tokens > 640: first's tail goes
    assert cached(post(provider, second)[1]) == 384
    assert cached(post(provider, first)[1]) < 384
    assert provider.stats().index.cached_tokens <= 640


# --- laws ---------------------------------------------------------------------

turn_texts = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)),
    min_size=0,
    max_size=120,
)


@settings(
    max_examples=scaled_examples(60), suppress_health_check=[HealthCheck.too_slow]
)
@given(
    st.lists(st.tuples(turn_texts, turn_texts), min_size=1, max_size=8),
    st.sampled_from(["deepseek", "openai"]),
)
def test_append_only_conversation_never_loses_cached_tokens(turns, dialect):
    provider = FakeProvider(dialect, block_size=16, min_cacheable_tokens=16)
    messages: list[dict] = [{"role": "system", "content": words(40)}]
    previous = 0
    for user, assistant in turns:
        messages.append({"role": "user", "content": user})
        model = provider.profile.models[0]
        _, record = post(provider, {"model": model, "messages": messages})
        now = cached(record)
        assert now >= previous
        assert record.diagnostic["relation"] in ("first", "append")
        previous = now
        messages.append({"role": "assistant", "content": assistant})


def _first_difference(a: bytes, b: bytes) -> int:
    limit = min(len(a), len(b)) // TOKEN_BYTES
    for position in range(limit):
        start = position * TOKEN_BYTES
        if a[start : start + TOKEN_BYTES] != b[start : start + TOKEN_BYTES]:
            return position
    return limit


@settings(
    max_examples=scaled_examples(80), suppress_health_check=[HealthCheck.too_slow]
)
@given(
    st.lists(turn_texts, min_size=2, max_size=6),
    st.data(),
    st.sampled_from([8, 16, 64]),
)
def test_an_edit_before_position_p_caps_the_hit_at_the_last_block_boundary_before_p(
    texts, data, block
):
    provider = FakeProvider("deepseek", block_size=block, min_cacheable_tokens=block)
    messages = [{"role": "user", "content": text} for text in texts]
    original = {"model": "deepseek-chat", "messages": messages}
    post(provider, original)
    target = data.draw(st.integers(0, len(texts) - 1), label="edited message")
    text = texts[target]
    cut = data.draw(st.integers(0, len(text)), label="edit offset")
    insert = data.draw(st.text(min_size=1, max_size=5), label="inserted text")
    edited_messages = [dict(m) for m in messages]
    edited_messages[target]["content"] = text[:cut] + insert + text[cut:]
    edited = {"model": "deepseek-chat", "messages": edited_messages}
    assume(edited != original)

    encode = provider.encoder
    before = render_prompt(provider.prompt_segments(original), encode)
    after = render_prompt(provider.prompt_segments(edited), encode)
    p = _first_difference(before.tokens, after.tokens)
    n = after.n_tokens
    _, record = post(provider, edited)
    hit = cached(record)
    assert hit <= (p // block) * block
    expected = (min(p, n - 1) // block) * block
    assert hit == (expected if expected >= block else 0)


@settings(max_examples=scaled_examples(60))
@given(
    st.floats(min_value=0, max_value=2000, allow_nan=False),
    st.sampled_from([60.0, 300.0, 900.0]),
)
def test_a_prefix_hits_only_while_younger_than_its_ttl(elapsed, ttl):
    provider = FakeProvider("deepseek", ttl=ttl)
    body = sized(provider, 300, model="deepseek-chat")
    post(provider, body)
    provider.advance(elapsed)
    assert cached(post(provider, body)[1]) == (256 if elapsed < ttl else 0)


@settings(
    max_examples=scaled_examples(40), suppress_health_check=[HealthCheck.too_slow]
)
@given(st.lists(st.integers(1, 6), min_size=1, max_size=10), st.integers(128, 1024))
def test_eviction_keeps_the_index_within_capacity_and_the_latest_prompt_cached(
    sizes, capacity
):
    provider = FakeProvider("deepseek", capacity_tokens=capacity)
    bodies = []
    for position, blocks in enumerate(sizes):
        history = [{"role": "system", "content": f"conversation {position}"}]
        body = sized(provider, blocks * 64 + 1, history=history)
        bodies.append(body)
        post(provider, body)
        assert provider.stats().index.cached_tokens <= capacity
    last = bodies[-1]
    _, record = post(provider, last)
    assert cached(record) == min(sizes[-1] * 64, (capacity // 64) * 64)


# --- concurrency -----------------------------------------------------------


def test_concurrent_requests_keep_the_index_consistent(deepseek):
    from concurrent.futures import ThreadPoolExecutor

    bodies = [sized(deepseek, 300 + 10 * k, model="deepseek-chat") for k in range(8)]

    def send(body):
        return post(deepseek, body)[0].status

    with ThreadPoolExecutor(max_workers=8) as pool:
        statuses = list(pool.map(send, bodies * 5))
    assert statuses == [200] * 40
    assert [r.index for r in deepseek.requests] == list(range(40))
    stats = deepseek.stats()
    assert stats.answered == 40
    for body in bodies:
        n = deepseek.count_prompt_tokens(body)
        assert cached(post(deepseek, body)[1]) == ((n - 1) // 64) * 64


def test_stats_sum_prompt_and_cached_tokens(deepseek):
    body = sized(deepseek, 300, model="deepseek-chat")
    post(deepseek, body)
    post(deepseek, body)
    stats = deepseek.stats()
    assert (
        stats.requests,
        stats.answered,
        stats.prompt_tokens,
        stats.cached_tokens,
    ) == (2, 2, 600, 256)
    assert stats.hit_ratio == pytest.approx(256 / 600)
    assert stats.warm_hit_ratio == pytest.approx(256 / 300)


def test_reset_forgets_cache_and_captures(deepseek):
    body = sized(deepseek, 300, model="deepseek-chat")
    post(deepseek, body)
    deepseek.push(Reply(text="queued"))
    deepseek.reset()
    assert deepseek.requests == []
    assert len(deepseek.script) == 0
    _, record = post(deepseek, body)
    assert cached(record) == 0
    assert record.diagnostic["relation"] == "first"


def test_a_full_reset_restarts_numbering_so_the_same_requests_get_the_same_bytes():
    from reqfold.fakes import ToolCall

    provider = FakeProvider("deepseek")
    body = {"model": "deepseek-chat", "messages": [{"role": "user", "content": "x"}]}

    def run() -> tuple[int, bytes]:
        provider.push(Reply(tool_calls=(ToolCall.of("f", {}),)))
        plan, record = post(provider, body)
        return record.index, b"".join(plan.chunks)

    first = run()
    provider.reset(clock=True)
    assert run() == first


# --- hostile but valid JSON bodies -------------------------------------------


def raw_post(provider: FakeProvider, raw: bytes, path: str = "/chat/completions"):
    return provider.handle(
        HttpRequest(
            method="POST",
            path=path,
            headers=(("content-type", "application/json"),),
            body=raw,
        )
    )


@pytest.mark.parametrize(
    "raw",
    [
        b'{"model":"deepseek-chat","max_tokens":' + b"9" * 5000 + b',"messages":[]}',
        b'{"model":"\\ud800","messages":[{"role":"user","content":"x"}]}',
        b'{"model":"deepseek-chat","messages":[{"role":"user","content":"\\ud800"}]}',
        b'{"model":"deepseek-chat","\\udfff":1,"messages":[{"role":"user","content":"x"}]}',
        b'{"model":"deepseek-chat","metadata":{"x":1e400},"messages":[{"role":"user","content":"x"}]}',
    ],
    ids=["huge-int", "surrogate-model", "surrogate-content", "surrogate-key", "1e400"],
)
def test_valid_json_python_cannot_represent_gets_a_400_and_keeps_the_capture_exportable(
    deepseek, raw
):
    plan = raw_post(deepseek, raw)
    assert plan.status == 400
    assert json.loads(b"".join(plan.chunks))["error"]["type"] == "invalid_request_error"
    assert deepseek.last_request.index == 0
    lines = deepseek.capture_jsonl().encode("utf-8").splitlines()
    assert len(lines) == 1
    ok = raw_post(
        deepseek,
        b'{"model":"deepseek-chat","messages":[{"role":"user","content":"x"}]}',
    )
    assert ok.status == 200
    assert deepseek.last_request.index == 1


def test_a_request_that_crashes_the_handler_is_recorded_under_its_index(deepseek):
    def boom(request):
        raise RuntimeError("responder bug")

    deepseek.respond_with(boom)
    body = {"model": "deepseek-chat", "messages": [{"role": "user", "content": "x"}]}
    with pytest.raises(RuntimeError):
        post(deepseek, body)
    record = deepseek.last_request
    assert (record.index, record.status) == (0, 500)
    assert deepseek.stats().errors == 1
    deepseek.respond_with(None)
    _, after = post(deepseek, body)
    assert after.index == 1

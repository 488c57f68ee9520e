"""Benchmark: the fake provider's cost per request as conversations grow.

Reproducible (seeded text, logical clock, deterministic replies). For
prompts of about 2k, 20k and 200k tokens, a conversation with a growing
shared prefix is replayed against one uvicorn server on 127.0.0.1 that
serves both the fake provider and a no-op ASGI endpoint (`/noop`, which
reads the same body and answers `{}`), in the same run, so the ratio
isolates the fake's own work from HTTP and JSON transfer. The core is
also timed alone (`FakeProvider.handle`, no sockets).

Printed per size: median wall time per request for the fake and the no-op
endpoint and their ratio, requests per second, the core's median time,
its cost per prompt token, and the core time of the cold first request
(every segment tokenized) against warm turns (only the new segments
tokenized). Linear cost shows as a flat microseconds-per-token column
across sizes (10x tokens -> ~10x time, not 100x) and as warm turns whose
time does not grow with the turn number.

Run: python benchmarks/fake_provider.py [--seed 7] [--quick]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import httpx

from fakes import FakeProvider, HttpRequest, count_tokens
from fakes.app import create_app, noop_app
from fakes.server import running_server

Scope = MutableMapping[str, Any]
ASGI = Callable[[Scope, Any, Any], Awaitable[None]]

SIZES = (2_000, 20_000, 200_000)
NEW_TOKENS = 200  # tokens each turn appends (user message + assistant reply)
VOCABULARY = [
    "cache",
    "prefix",
    "token",
    "session",
    "header",
    "delta",
    "fold",
    "request",
    "provider",
    "stream",
    "boundary",
    "snapshot",
    "writer",
    "canonical",
    "harness",
    "the",
    "of",
    "and",
    "a",
    "to",
    "in",
    "is",
    "it",
    "for",
    "on",
    "with",
    "as",
]


WORD_TOKENS = {word: count_tokens(" " + word) for word in VOCABULARY}


def words(rng: random.Random, tokens: int) -> str:
    """Seeded text of about `tokens` approx-v1 tokens (exact up to one word)."""
    chosen: list[str] = []
    total = 0
    while total < tokens:
        word = rng.choice(VOCABULARY)
        chosen.append(word)
        total += WORD_TOKENS[word]
    return " ".join(chosen)


def combined_app(provider: FakeProvider) -> ASGI:
    fake = create_app(provider)

    async def app(scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"] == "/noop":
            await noop_app(scope, receive, send)
        else:
            await fake(scope, receive, send)

    return app


def conversation(rng: random.Random, size: int, turns: int) -> list[dict[str, Any]]:
    """Request bodies of one conversation whose median prompt is ~size tokens.

    A shared prefix (the system prompt), then `turns` requests, each adding
    a user message and the previous assistant reply (NEW_TOKENS together).
    """
    system = words(rng, max(size - turns * NEW_TOKENS // 2, size // 4))
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}]
    bodies = []
    for _ in range(turns):
        messages.append({"role": "user", "content": words(rng, NEW_TOKENS // 2)})
        bodies.append({"model": "deepseek-chat", "messages": list(messages)})
        messages.append({"role": "assistant", "content": words(rng, NEW_TOKENS // 2)})
    return bodies


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def run_size(size: int, turns: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed * 1_000_003 + size)
    provider = FakeProvider("deepseek", max_body_bytes=64 * 1024 * 1024)
    bodies = conversation(rng, size, turns)
    raws = [json.dumps(body).encode() for body in bodies]
    headers = {"authorization": "Bearer sk-bench", "content-type": "application/json"}

    fake_times: list[float] = []
    noop_times: list[float] = []
    with (
        running_server(app=combined_app(provider)) as url,
        httpx.Client(base_url=url, headers=headers, timeout=60) as client,
    ):
        client.post("/noop", content=b"{}")  # open the connection
        for raw in raws:
            start = time.perf_counter()
            client.post("/noop", content=raw).raise_for_status()
            noop_times.append(time.perf_counter() - start)
            start = time.perf_counter()
            client.post("/chat/completions", content=raw).raise_for_status()
            fake_times.append(time.perf_counter() - start)
        usages = [r.usage for r in provider.requests]

    core = FakeProvider("deepseek", max_body_bytes=64 * 1024 * 1024)
    core_times: list[float] = []
    for raw in raws:
        request = HttpRequest(
            method="POST",
            path="/chat/completions",
            body=raw,
            headers=(("authorization", "Bearer sk-bench"),),
        )
        start = time.perf_counter()
        core.handle(request)
        core_times.append(time.perf_counter() - start)

    assert all(u is not None for u in usages)
    prompt_tokens = [u["prompt_tokens"] for u in usages if u is not None]
    cached = [u["prompt_cache_hit_tokens"] for u in usages if u is not None]
    warm = core_times[1:]
    half = len(warm) // 2
    return {
        "size": size,
        "turns": turns,
        "prompt_tokens": statistics.median(prompt_tokens),
        "hit_ratio_warm": sum(cached[1:]) / sum(prompt_tokens[1:]),
        "fake_ms": median_ms(fake_times),
        "noop_ms": median_ms(noop_times),
        "core_ms": median_ms(warm),
        "cold_core_ms": core_times[0] * 1000,
        "early_warm_ms": median_ms(warm[:half]),
        "late_warm_ms": median_ms(warm[half:]),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="fewer turns per size")
    args = parser.parse_args()
    turns = {2_000: 10, 20_000: 30, 200_000: 12}
    if args.quick:
        turns = {size: max(4, count // 4) for size, count in turns.items()}

    started = time.perf_counter()
    rows = [run_size(size, turns[size], args.seed) for size in SIZES]
    print(
        f"fake provider benchmark (seed {args.seed}, deepseek dialect, "
        f"{NEW_TOKENS} new tokens per turn, medians)"
    )
    header = (
        f"{'prompt':>8} {'turns':>5} {'fake ms':>8} {'noop ms':>8} {'ratio':>6} "
        f"{'req/s':>7} {'core ms':>8} {'us/tok':>7} {'cold ms':>8} "
        f"{'warm 1st half':>13} {'warm 2nd half':>13} {'hit%':>5}"
    )
    print(header)
    for row in rows:
        per_token = row["core_ms"] * 1000 / row["prompt_tokens"]
        print(
            f"{row['prompt_tokens']:>8.0f} {row['turns']:>5} {row['fake_ms']:>8.2f} "
            f"{row['noop_ms']:>8.2f} {row['fake_ms'] / row['noop_ms']:>6.2f} "
            f"{1000 / row['fake_ms']:>7.1f} {row['core_ms']:>8.2f} {per_token:>7.3f} "
            f"{row['cold_core_ms']:>8.2f} {row['early_warm_ms']:>13.2f} "
            f"{row['late_warm_ms']:>13.2f} {100 * row['hit_ratio_warm']:>5.1f}"
        )
    small, medium, large = rows
    print(
        "core time ratio 20k/2k = "
        f"{medium['core_ms'] / small['core_ms']:.1f}x, 200k/20k = "
        f"{large['core_ms'] / medium['core_ms']:.1f}x for "
        f"{medium['prompt_tokens'] / small['prompt_tokens']:.1f}x and "
        f"{large['prompt_tokens'] / medium['prompt_tokens']:.1f}x tokens "
        "(linear: ratios track the token ratios; quadratic would square them)"
    )
    print(f"total {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

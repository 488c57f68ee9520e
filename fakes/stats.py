"""Provider totals: the values behind `provider.stats()` and `GET /_fake/stats`.

Plain data and one pure function, so the core (which fills them in) and
the control surface (which serves them) both depend on this module and
never on each other's internals.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from reqfold.fakes.cache_index import IndexStats
from reqfold.fakes.jsontypes import JsonObject


@dataclass(frozen=True, slots=True, kw_only=True)
class CaptureStats:
    """What the capture log holds, its bounds, and what they made it drop.

    `bytes` counts the raw request bodies kept, and `stored_bytes` what
    the log keeps for them (compressed, or as deltas against the body
    before), which `max_bytes` bounds; `dropped_requests` and
    `dropped_bytes` count the oldest records removed to respect the bounds
    since the last reset.
    """

    requests: int
    bytes: int
    max_requests: int | None
    max_bytes: int | None
    dropped_requests: int
    dropped_bytes: int
    stored_bytes: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderStats:
    """Totals since the last reset.

    `hit_ratio` is cached / prompt tokens over answered requests, and
    `warm_hit_ratio` the same excluding each partition's first request.
    `forgotten_prompts` counts earlier requests the diagnostics ledger no
    longer remembers (its byte bound): they can no longer be the closest
    earlier request of a diagnostic.
    """

    requests: int
    answered: int
    errors: int
    prompt_tokens: int
    cached_tokens: int
    cache_write_tokens: int
    hit_ratio: float
    warm_hit_ratio: float
    clock: float
    index: IndexStats
    capture: CaptureStats
    forgotten_prompts: int


def dump_stats(stats: ProviderStats) -> JsonObject:
    """The JSON form served by `GET /_fake/stats`."""
    return {
        "requests": stats.requests,
        "answered": stats.answered,
        "errors": stats.errors,
        "prompt_tokens": stats.prompt_tokens,
        "cached_tokens": stats.cached_tokens,
        "cache_write_tokens": stats.cache_write_tokens,
        "hit_ratio": stats.hit_ratio,
        "warm_hit_ratio": stats.warm_hit_ratio,
        "clock": stats.clock,
        "index": dataclasses.asdict(stats.index),
        "capture": dataclasses.asdict(stats.capture),
        "forgotten_prompts": stats.forgotten_prompts,
    }


@dataclass(slots=True)
class Totals:
    """Running counts of one provider since its last reset (mutable)."""

    requests: int = 0
    answered: int = 0
    errors: int = 0
    prompt: int = 0
    cached: int = 0
    written: int = 0
    first_prompt: int = 0

    def count(self, prompt: int, cached: int, written: int, *, first: bool) -> None:
        """Count one answered request (`first` in its partition)."""
        self.answered += 1
        self.prompt += prompt
        self.cached += cached
        self.written += written
        if first:
            self.first_prompt += prompt

    def snapshot(
        self,
        *,
        clock: float,
        index: IndexStats,
        capture: CaptureStats,
        forgotten_prompts: int,
    ) -> ProviderStats:
        """The totals as a `ProviderStats` value."""
        return ProviderStats(
            requests=self.requests,
            answered=self.answered,
            errors=self.errors,
            prompt_tokens=self.prompt,
            cached_tokens=self.cached,
            cache_write_tokens=self.written,
            hit_ratio=_ratio(self.cached, self.prompt),
            warm_hit_ratio=_ratio(self.cached, self.prompt - self.first_prompt),
            clock=clock,
            index=index,
            capture=capture,
            forgotten_prompts=forgotten_prompts,
        )


def _ratio(part: int, whole: int) -> float:
    return part / whole if whole > 0 else 0.0

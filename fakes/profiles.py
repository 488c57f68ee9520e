"""Dialect profiles: the per-provider rules and knobs, as data.

A `Profile` says which wire format the fake speaks and how its cache
behaves. The built-in profiles are rows of the dialect registry
(`reqfold.fakes.dialects.registry`), the one place a dialect is named.
The numbers come from the providers' caching documentation (the
table in docs/fake-provider.md, "Knobs") and drift between model
generations, so they are configuration, not constants: override any
field with `dataclasses.replace` or the `FakeProvider(..., **overrides)`
keywords.

Hit rule for the automatic-prefix dialects (`deepseek`, `openai`), with
`match` the number of leading prompt tokens found in the cache and `n` the
prompt length::

    cap    = n - 1 if withhold_last_token else n
    hit    = floor(min(match, cap) / block_size) * block_size
    cached = hit if hit >= min_cacheable_tokens else 0

DeepSeek (documented 2024 rule): 64-token blocks, nothing under 64 tokens.
OpenAI (classic rule): 1024 tokens minimum, then 128-token increments, so
cached is one of 0, 1024, 1152, ...; a 2006-token resend reports 1920.
OpenAI Responses (`openai-responses`): the same cache as OpenAI, with
`prompt_cache_key` isolating (it routes requests to machines).
Anthropic: entries only at `cache_control` breakpoints, 20-block lookback,
model minimum (1024 by default), 5-minute TTL refreshed on hit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from reqfold.fakes.jsontypes import has_lone_surrogate

StreamUsage = Literal["finish_chunk", "include_usage"]
RenderSection = Literal["tools", "system", "messages"]

MINUTE = 60.0
HOUR = 3600.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Profile:
    """Everything that makes the fake behave like one provider.

    Attributes:
        dialect: the name of the dialect registry's row this profile
            belongs to (`reqfold.fakes.dialects.registry`: wire format,
            usage fields and answers); a provider refuses a name the
            registry does not have.
        block_size: cache granularity in tokens (automatic-prefix dialects).
        min_cacheable_tokens: prompts (or breakpoint prefixes) shorter than
            this are never cached.
        withhold_last_token: cap a hit at `n - 1` tokens (the last token is
            always recomputed, as in vLLM), instead of `n`.
        ttl: seconds an entry lives after its last use; `None` = forever.
        ttl_long: the `"ttl": "1h"` lifetime (Anthropic).
        refresh_on_hit: a hit restarts the entry's TTL.
        max_age: hard lifetime from creation; `None` = none.
        capacity_tokens: total cached tokens before LRU eviction;
            `None` = unbounded.
        isolate_api_keys: requests with different API keys never share
            cache entries (caches are per account/organization).
        isolation_fields: top-level request fields whose value also
            isolates caches (`user_id`, `prompt_cache_key`, ...).
        render_order: order in which tools, system and messages form the
            prompt prefix.
        stream_usage: where a stream carries usage: on the chunk with the
            finish reason (DeepSeek), or in an extra `choices: []` chunk
            only when `stream_options.include_usage` is true (OpenAI).
        breakpoint_limit, lookback_blocks: Anthropic breakpoint rules.
        chunk_chars: characters of text per streamed delta.
        max_body_bytes: larger request bodies get a 413 error.
        default_text: the reply text when nothing is scripted.
        seed: mixed into generated ids (ids are deterministic).
        model_minimums: per-model `min_cacheable_tokens` overrides.
        models: the model names served (with those in `model_minimums`);
            a request for another model gets the provider's "unknown
            model" error. `"*"` serves any model.
    """

    dialect: str
    block_size: int
    min_cacheable_tokens: int
    withhold_last_token: bool
    ttl: float | None
    ttl_long: float | None = HOUR
    refresh_on_hit: bool = True
    max_age: float | None = None
    capacity_tokens: int | None = None
    isolate_api_keys: bool = True
    isolation_fields: tuple[str, ...] = ()
    render_order: tuple[RenderSection, ...] = ("tools", "system", "messages")
    stream_usage: StreamUsage = "include_usage"
    breakpoint_limit: int = 4
    lookback_blocks: int = 20
    chunk_chars: int = 16
    max_body_bytes: int = 32 * 1024 * 1024
    default_text: str = "ok"
    seed: int = 0
    model_minimums: tuple[tuple[str, int], ...] = ()
    models: tuple[str, ...] = ("*",)

    def __post_init__(self) -> None:
        _check_text("dialect", self.dialect)
        _check_choice(
            "stream_usage", self.stream_usage, ("finish_chunk", "include_usage")
        )
        for name in ("withhold_last_token", "refresh_on_hit", "isolate_api_keys"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(
                    f"{name} must be a boolean, got {getattr(self, name)!r}"
                )
        _check_int("block_size", self.block_size, 1)
        _check_int("min_cacheable_tokens", self.min_cacheable_tokens, 0)
        _check_int("chunk_chars", self.chunk_chars, 1)
        _check_int("max_body_bytes", self.max_body_bytes, 0)
        _check_int("breakpoint_limit", self.breakpoint_limit, 0)
        _check_int("lookback_blocks", self.lookback_blocks, 0)
        _check_int("seed", self.seed, None)
        if self.capacity_tokens is not None:
            _check_int("capacity_tokens", self.capacity_tokens, 0)
        for name in ("ttl", "ttl_long", "max_age"):
            _check_seconds(name, getattr(self, name))
        _check_text("default_text", self.default_text)
        for name in ("isolation_fields", "render_order", "models"):
            items = getattr(self, name)
            if not isinstance(items, tuple):
                raise TypeError(f"{name} must be a tuple of strings, got {items!r}")
            for item in items:
                _check_text(name, item)
        if sorted(self.render_order) != ["messages", "system", "tools"]:
            raise ValueError(
                "render_order must name tools, system and messages once each, "
                f"got {self.render_order!r}"
            )
        if not isinstance(self.model_minimums, tuple):
            raise TypeError(
                f"model_minimums must be a tuple of pairs, got {self.model_minimums!r}"
            )
        for pair in self.model_minimums:
            if not (isinstance(pair, tuple) and len(pair) == 2):
                raise TypeError(f"model_minimums entries must be pairs, got {pair!r}")
            _check_text("model_minimums", pair[0])
            _check_int(f"model_minimums[{pair[0]!r}]", pair[1], 0)

    def serves(self, model: str) -> bool:
        """Whether requests for `model` are answered."""
        return (
            "*" in self.models
            or model in self.models
            or any(name == model for name, _ in self.model_minimums)
        )

    def minimum_for(self, model: str) -> int:
        """Minimum cacheable prefix for `model`."""
        return dict(self.model_minimums).get(model, self.min_cacheable_tokens)


def _check_int(name: str, value: object, minimum: int | None) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")


def _check_seconds(name: str, value: object) -> None:
    """`None` (no limit) or a finite number of seconds >= 0."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{name} must be a number of seconds or null, got {value!r}")
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be finite and >= 0 seconds, got {value}")


def _check_choice(name: str, value: object, choices: Sequence[str]) -> None:
    if value not in choices or not isinstance(value, str):
        raise ValueError(f"{name} must be one of {list(choices)}, got {value!r}")


def _check_text(name: str, value: object) -> None:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, got {value!r}")
    if has_lone_surrogate(value):
        raise ValueError(f"{name} must be valid Unicode (no lone surrogates)")

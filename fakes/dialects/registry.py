"""The dialect registry: one row per dialect the fake speaks, the only place
a dialect is named.

A row (`DialectRow`) holds everything about one dialect: its profile
(the name a user picks it by, its cache rules and models, as data; the
built-in profiles are the module's constants, one to a row), and
the object that speaks it (`Dialect`: the paths it serves, how a body is
parsed and cut into prompt segments, how an answer, an error and a fault
are rendered, and the provider's own cache diagnostics). Everything else
that names dialects is derived from the rows: `PROFILES`, `DIALECTS`, the
CLI's `--dialect` choices and default, the path lookup.

- `deepseek` and `openai`: `ChatDialect` (chat completions; automatic
  prefix caching in blocks, `reqfold.fakes.cache_index`), with each
  provider's answers as a `ChatFlavour`;
- `anthropic`: `MessagesDialect` (messages; `cache_control` breakpoints);
- `openai-responses`: `ResponsesDialect` (the Responses API; automatic
  prefix caching as `openai`, conversation state by `previous_response_id`).

A new dialect is one row here plus the modules that speak it
(docs/fake-provider.md, "How to add a dialect").
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from reqfold.fakes.dialects.base import Dialect
from reqfold.fakes.dialects.chat_dialect import ChatDialect
from reqfold.fakes.dialects.messages_dialect import MessagesDialect
from reqfold.fakes.dialects.openai_chat import ChatFlavour
from reqfold.fakes.dialects.responses_dialect import ResponsesDialect
from reqfold.fakes.profiles import HOUR, MINUTE, Profile

__all__ = [
    "ANTHROPIC",
    "DEEPSEEK",
    "DEFAULT_DIALECT",
    "DIALECTS",
    "DIALECT_NAMES",
    "OPENAI",
    "OPENAI_RESPONSES",
    "PROFILES",
    "REGISTRY",
    "DialectRow",
    "dialect_named",
    "dialect_serving",
    "get_profile",
    "served_by",
    "serving_name",
]


@dataclass(frozen=True, slots=True)
class DialectRow:
    """One dialect: its profile (which carries its name) and what speaks it."""

    profile: Profile
    speaks: Dialect[Any]

    @property
    def name(self) -> str:
        """The name a user picks this dialect by (`--dialect NAME`)."""
        return self.profile.dialect

    @property
    def paths(self) -> tuple[str, ...]:
        """The provider paths this dialect serves."""
        return self.speaks.paths


DEEPSEEK = Profile(
    dialect="deepseek",
    block_size=64,
    min_cacheable_tokens=64,
    withhold_last_token=True,
    ttl=6 * HOUR,
    isolation_fields=("user_id",),
    stream_usage="finish_chunk",
    models=("deepseek-chat", "deepseek-reasoner"),
)

OPENAI = Profile(
    dialect="openai",
    block_size=128,
    min_cacheable_tokens=1024,
    withhold_last_token=False,
    ttl=10 * MINUTE,
    max_age=HOUR,
    stream_usage="include_usage",
    models=(
        "gpt-4o",
        "gpt-4o-mini",
        "gpt-4.1",
        "gpt-4.1-mini",
        "gpt-4.1-nano",
        "gpt-5",
        "gpt-5-mini",
        "gpt-5-nano",
        "o3",
        "o4-mini",
    ),
)

ANTHROPIC = Profile(
    dialect="anthropic",
    block_size=1,
    min_cacheable_tokens=1024,
    withhold_last_token=False,
    ttl=5 * MINUTE,
    ttl_long=HOUR,
    refresh_on_hit=True,
    models=(
        "claude-opus-4-1",
        "claude-opus-4-0",
        "claude-sonnet-4-5",
        "claude-sonnet-4-0",
        "claude-3-7-sonnet-latest",
        "claude-haiku-4-5",
        "claude-3-5-haiku-latest",
    ),
)

OPENAI_RESPONSES = dataclasses.replace(
    OPENAI,
    dialect="openai-responses",
    # A different prompt_cache_key is routed to another machine, which
    # misses (OpenAI's prompt caching guide): the fake isolates by it.
    isolation_fields=("prompt_cache_key",),
)

REGISTRY: tuple[DialectRow, ...] = (
    DialectRow(
        DEEPSEEK,
        ChatDialect(
            flavour=ChatFlavour(
                uuid_ids=True,
                hit_miss_usage=True,
                reasoning_content=True,
                empty_content=True,
            ),
            unknown_status=400,
            unknown_code="invalid_request_error",
            unknown_wording="Model Not Exist: {quoted}",
        ),
    ),
    DialectRow(
        OPENAI,
        ChatDialect(
            flavour=ChatFlavour(
                uuid_ids=False,
                hit_miss_usage=False,
                reasoning_content=False,
                empty_content=False,
            ),
            unknown_status=404,
            unknown_code="model_not_found",
            unknown_wording=(
                "The model `{model}` does not exist or you do not have access to it."
            ),
        ),
    ),
    DialectRow(ANTHROPIC, MessagesDialect()),
    DialectRow(OPENAI_RESPONSES, ResponsesDialect()),
)
"""Every dialect the fake speaks, one row each; the first is the default."""

DIALECT_NAMES: tuple[str, ...] = tuple(row.name for row in REGISTRY)
DEFAULT_DIALECT = DIALECT_NAMES[0]
PROFILES: dict[str, Profile] = {row.name: row.profile for row in REGISTRY}
"""The built-in profile of each dialect, by name."""
DIALECTS: dict[str, Dialect[Any]] = {row.name: row.speaks for row in REGISTRY}
"""What speaks each dialect, by name."""


def _unknown(name: str) -> ValueError:
    known = ", ".join(sorted(PROFILES))
    return ValueError(f"unknown dialect {name!r}; known: {known}")


def get_profile(name: str) -> Profile:
    """The built-in profile of the dialect called `name`."""
    try:
        return PROFILES[name]
    except KeyError:
        raise _unknown(name) from None


def dialect_named(name: str) -> Dialect[Any]:
    """What speaks the dialect called `name` (ValueError names the known)."""
    try:
        return DIALECTS[name]
    except KeyError:
        raise _unknown(name) from None


def served_by(path: str) -> tuple[DialectRow, ...]:
    """The rows whose dialect serves `path`, in registry order."""
    return tuple(row for row in REGISTRY if path in row.paths)


def dialect_serving(path: str) -> Dialect[Any] | None:
    """The first dialect (in registry order) that serves `path`, if any."""
    rows = served_by(path)
    return rows[0].speaks if rows else None


def serving_name(path: str) -> str | None:
    """What to call the dialect a `path` needs: the one row's name, or the
    wire format's name when several rows serve it; None when none does."""
    rows = served_by(path)
    if not rows:
        return None
    return rows[0].name if len(rows) == 1 else rows[0].speaks.wire

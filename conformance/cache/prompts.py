"""A captured request rendered as the fake renders it: segments and tokens.

The judgement measures tokens exactly as the fake does, so its numbers
match the fake's usage: the request is parsed and split into segments by
the fake's own dialect (`reqfold.fakes.dialects`), tokenized segment by
segment (`reqfold.fakes.prompt`), and the cache rule of the dialect's
profile (block size, minimum) turns a matched prefix into cached tokens.

The **opening** of a request is its leading tools and system segments
(in the default render order: tools, then system); what follows is the
conversation.
"""

from __future__ import annotations

from dataclasses import dataclass

from reqfold.fakes.diagnostics import common_prefix
from reqfold.fakes.dialects.base import cache_rule
from reqfold.fakes.dialects.message_memo import MessagePrefixMemo
from reqfold.fakes.dialects.registry import (
    dialect_named,
    dialect_serving,
    served_by,
)
from reqfold.fakes.errors import InvalidRequest
from reqfold.fakes.jsontypes import JsonObject, JsonValue
from reqfold.fakes.profiles import Profile
from reqfold.fakes.prompt import Segment
from reqfold.fakes.tokenizer import TOKEN_BYTES, SegmentEncoder

SYSTEM_ROLES = ("system", "developer")


@dataclass(frozen=True, slots=True, kw_only=True)
class Prompt:
    """One request's prompt: its segments, where each ends, its opening."""

    index: int
    profile: Profile
    model: str
    segments: tuple[Segment, ...]
    digests: tuple[bytes, ...]
    ends: tuple[int, ...]
    tokens: bytes
    """The packed token ids (`reqfold.fakes.tokenizer.TOKEN_BYTES` each)."""
    opening: int
    """How many leading segments are tools or system text."""
    tool_names: tuple[str, ...]
    system_text: str
    message_count: int
    reply: JsonValue = None
    cached: int | None = None
    written: int | None = None

    @property
    def n_tokens(self) -> int:
        """Prompt length in tokens."""
        return self.ends[-1] if self.ends else 0

    def start_of(self, position: int) -> int:
        """Token offset at which segment `position` starts."""
        if position <= 0:
            return 0
        return self.ends[min(position, len(self.ends)) - 1]

    @property
    def opening_tokens(self) -> int:
        """Tokens of the tools and system text."""
        return self.start_of(self.opening)

    def cached_for(self, matched: int) -> int:
        """Cached tokens the fake reports when `matched` leading tokens hit."""
        return cache_rule(self.profile, matched, self.n_tokens, self.model)


def shared_segments(earlier: Prompt, current: Prompt) -> int:
    """How many leading segments the two prompts have identical."""
    shared = 0
    for left, right in zip(earlier.digests, current.digests, strict=False):
        if left != right:
            break
        shared += 1
    return shared


def shared_tokens(earlier: Prompt, current: Prompt) -> int:
    """How many leading tokens the two prompts have identical (what the
    fake's prefix cache can match, inside a segment too)."""
    common = common_prefix(earlier.tokens, current.tokens)
    return common // TOKEN_BYTES


def choose_profile(path: str, body: JsonObject, usage: JsonObject | None) -> Profile:
    """The profile a capture line was served under, from what it shows.

    The one registry row serving the path; where several serve it (chat
    completions), the first whose answers report the usage members the
    line shows (`Dialect.shows_usage`: DeepSeek's `prompt_cache_hit_tokens`,
    OpenAI's `prompt_tokens_details`), else the first that lists the
    body's model, else the first row serving the path.
    """
    rows = served_by(path)
    if not rows:
        raise ValueError(f"no dialect serves {path!r}")
    if len(rows) == 1:
        return rows[0].profile
    if usage is not None:
        shown = [row for row in rows if row.speaks.shows_usage(usage)]
        if shown:
            rows = tuple(shown)
    model = body.get("model")
    listed = [row for row in rows if model in row.profile.models]
    return (listed or rows)[0].profile


def caches_in_blocks(profile: Profile) -> bool:
    """Whether the profile's dialect caches prompts in blocks (automatic
    prefix caching) rather than at the request's breakpoints."""
    return dialect_named(profile.dialect).uses_block_keys


def render(
    index: int,
    path: str,
    body: JsonValue,
    encoder: SegmentEncoder,
    memo: MessagePrefixMemo | None = None,
    *,
    usage: JsonObject | None = None,
    reply: JsonValue = None,
    profile: Profile | None = None,
) -> Prompt | None:
    """The prompt of one captured request, or None when the fake would refuse it.

    `memo` keeps the rendered messages of the last few prompts, so a
    conversation resent whole is rendered only where it grew (the same
    result with or without it).
    """
    dialect = dialect_serving(path)
    if dialect is None or not isinstance(body, dict):
        return None
    chosen = profile or choose_profile(path, body, usage)
    try:
        call = dialect.parse(body)
        rendered = dialect.render(call, chosen, encoder, memo)
    except InvalidRequest:
        return None
    opening = _opening_length(rendered.segments)
    model = body.get("model")
    return Prompt(
        index=index,
        profile=chosen,
        model=model if isinstance(model, str) else "",
        segments=rendered.segments,
        digests=rendered.digests,
        ends=rendered.ends,
        tokens=rendered.tokens,
        opening=opening,
        tool_names=tuple(
            _tool_name(segment.value)
            for segment in rendered.segments[:opening]
            if segment.path.startswith("tools[")
        ),
        system_text="\n".join(
            _text_of(segment.value)
            for segment in rendered.segments[:opening]
            if not segment.path.startswith(("tools[", "response_format", "params"))
        ),
        message_count=_message_count(body),
        reply=reply,
        cached=_usage_number(usage, "cached"),
        written=_usage_number(usage, "written"),
    )


def _opening_length(segments: tuple[Segment, ...]) -> int:
    count = 0
    for segment in segments:
        if segment.path.startswith(
            ("tools[", "response_format", "system", "params", "instructions")
        ):
            count += 1
            continue
        value = segment.value
        if (
            segment.message_index is not None
            and isinstance(value, dict)
            and value.get("role") in SYSTEM_ROLES
        ):
            count += 1
            continue
        break
    return count


def _tool_name(tool: JsonValue) -> str:
    """A tool's name, else its type (a Responses built-in tool such as
    ``{"type": "web_search"}`` has none), else ``""``."""
    if not isinstance(tool, dict):
        return ""
    name = tool.get("name")
    function = tool.get("function")
    if not isinstance(name, str) and isinstance(function, dict):
        name = function.get("name")
    if not isinstance(name, str):
        name = tool.get("type")
    return name if isinstance(name, str) else ""


def text_of(value: JsonValue) -> str:
    """The text a segment carries (message content, text blocks), else ''."""
    return _text_of(value)


def _text_of(value: JsonValue) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(_text_of(item) for item in value)
    if isinstance(value, dict):
        for name in ("content", "text"):
            if name in value:
                return _text_of(value[name])
    return ""


def _message_count(body: JsonObject) -> int:
    # `input`: the items of a Responses request (a string is one message).
    messages = body.get("messages", body.get("input"))
    if isinstance(messages, str):
        return 1
    return len(messages) if isinstance(messages, list) else 0


def _usage_number(usage: JsonObject | None, what: str) -> int | None:
    if usage is None:
        return None
    if what == "written":
        return _count(usage.get("cache_creation_input_tokens"))
    for name in ("prompt_cache_hit_tokens", "cache_read_input_tokens"):
        value = _count(usage.get(name))
        if value is not None:
            return value
    details = usage.get("prompt_tokens_details", usage.get("input_tokens_details"))
    if isinstance(details, dict):
        return _count(details.get("cached_tokens"))
    return None


def _count(value: JsonValue) -> int | None:
    """A token count: an int, never a boolean (`true` is an int in Python)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None

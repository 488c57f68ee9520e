"""What the cache judgement returns: plain data, ready to print or serialise."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from reqfold.conformance.verdict import Check

Relation = Literal["first", "new-opening", "repeat", "append", "diverged", "fresh"]
ProcessKind = Literal["first", "resume", "fresh"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ProcessStart:
    """Where a harness process started, by the first request it sent.

    `kind`: `resume` (the process continues the previous one's session),
    `fresh` (a new session in the same project) or `first`.
    """

    first_index: int
    name: str
    kind: ProcessKind = "resume"


@dataclass(frozen=True, slots=True, kw_only=True)
class Row:
    """One request on the timeline."""

    index: int
    process: str
    stream: str
    prompt: int
    cached: int | None
    """What the fake reported (None when the capture has no usage)."""
    written: int | None
    lost: int
    """Tokens a pure append of the previous request of the stream would have
    kept cached and this request did not."""
    relation: Relation
    previous: int | None
    cause: str
    expected: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class Break:
    """A request that did not extend the previous one of its stream."""

    index: int
    previous: int
    process: str
    stream: str
    cause: str
    detail: str
    field: str
    earlier: str
    current: str
    lost: int
    expected: str | None
    """Why the break was expected (a declaration or a recognised shape), else None."""
    rules: tuple[str, ...]
    across: Literal["within", "resume", "fresh"]


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamSummary:
    """One stream: requests sharing an opening, judged within themselves."""

    name: str
    main: bool
    requests: int
    prompt_tokens: int
    share: float
    """Its part of all prompt tokens (0..1)."""
    cached_tokens: int
    lost_tokens: int
    breaks: int
    first_index: int
    tool_names: tuple[str, ...]
    system_excerpt: str


@dataclass(frozen=True, slots=True, kw_only=True)
class EchoFinding:
    """An assistant turn re-sent other than the provider returned it."""

    index: int
    previous: int
    stream: str
    field: str
    returned: str
    echoed: str


@dataclass(frozen=True, slots=True, kw_only=True)
class StaticOpening:
    """The tools and system text kept identical across processes."""

    opening_tokens: int
    """Tokens of the main stream's first opening."""
    static_tokens: int
    """Of those, the tokens every later process start kept identical."""
    starts: int
    """How many process starts were compared (1: nothing to compare)."""
    breakpoint_tokens: int | None
    """Anthropic only: the tokens up to the last cache breakpoint inside the
    static part (None for the automatic-prefix dialects, 0 when none)."""


PART = "cache"
"""The part of the checks the cache judgement makes (``findings``)."""

GATE = "gate"
"""The `Check.detail` member of a gate check (``--fail-on``,
``--max-lost-tokens``), naming its option: a threshold the user set, not a
finding of the capture alone."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CacheJudgement:
    """Everything the judgement found in one capture."""

    rows: list[Row] = field(default_factory=list)
    breaks: list[Break] = field(default_factory=list)
    streams: list[StreamSummary] = field(default_factory=list)
    echoes: list[EchoFinding] = field(default_factory=list)
    static: StaticOpening | None = None
    findings: list[Check] = field(default_factory=list)
    """The checks of the verdict (part `PART`): id, rules, outcome, message."""
    skipped: list[tuple[int, str]] = field(default_factory=list)
    """Requests left out, with why (refused by the fake, not a prompt)."""
    provider_said: dict[int, str] = field(default_factory=dict)
    """Per request index: what the provider's own cache diagnostics answered
    (`provider_said.provider_said`), for requests that opted in to them."""
    begins_at: int | None = None
    """The index of the capture's first line (None: no line); above 0, the
    requests before it are not in the capture (a capture limit dropped them)."""
    missing: int = 0
    """Request indices absent between the capture's first and last line."""

    @property
    def truncated(self) -> bool:
        """Requests the harness sent are missing from the capture."""
        return bool(self.begins_at) or self.missing > 0

    @property
    def lost_tokens(self) -> int:
        """Tokens lost against a pure append, over every unexpected break."""
        return sum(item.lost for item in self.breaks if item.expected is None)

    @property
    def prompt_tokens(self) -> int:
        """All prompt tokens sent."""
        return sum(row.prompt for row in self.rows)

    @property
    def cached_tokens(self) -> int:
        """All cached tokens the fake reported."""
        return sum(row.cached or 0 for row in self.rows)

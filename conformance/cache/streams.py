"""Streams: requests grouped by their opening, so each is judged within itself.

A harness sends its main conversation and, beside it, side requests with
an opening of their own (a title generator, a memory extractor, a
summarizer). Two requests belong to one stream when their openings are
alike: most of their tool names are the same, and most lines of their
system text are the same once digits and hex runs are masked (so a date
or a per-session id moves no request to another stream), or the system
texts share most of their length as a prefix.

The conversation decides first, as the fake's diagnostic finds the closest
request: a request whose conversation (the messages after the opening)
continues the conversation of a stream's last request belongs to that
stream whatever its opening did, so a short system prompt edited or a
tool list grown mid-conversation is a break of that stream, with its
cause, never a new stream. Openings are compared only for a request that
continues no stream's conversation (a title generator, a summarizer: an
opening of its own and a conversation of its own). A changed opening
inside one stream is then a break with a cause; a new opening is a new
stream.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from reqfold.conformance.cache.prompts import Prompt
from reqfold.fakes.diagnostics import common_prefix

ALIKE = 0.5
"""The least similarity (0..1) of two openings of one stream."""

_VOLATILE = re.compile(r"[0-9a-fA-F]*\d[0-9a-fA-F]*")


@dataclass(frozen=True, slots=True)
class OpeningShape:
    """What stream grouping compares of an opening."""

    tools: frozenset[str]
    lines: frozenset[str]
    system: str

    @classmethod
    def of(cls, prompt: Prompt) -> OpeningShape:
        """The shape of a prompt's opening."""
        lines = frozenset(
            _VOLATILE.sub("#", line.strip())
            for line in prompt.system_text.splitlines()
            if line.strip()
        )
        return cls(frozenset(prompt.tool_names), lines, prompt.system_text)


def continued(earlier: Prompt, current: Prompt) -> int:
    """How many conversation segments of `earlier` open the conversation of
    `current` (0: it does not continue it, or `earlier` had no conversation)."""
    before = earlier.digests[earlier.opening :]
    after = current.digests[current.opening :]
    if not before or after[: len(before)] != before:
        return 0
    return len(before)


def similarity(a: OpeningShape, b: OpeningShape) -> float:
    """How alike two openings are (0..1): the lesser of tools' and system's."""
    return min(_jaccard(a.tools, b.tools), _system_likeness(a, b))


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def _system_likeness(a: OpeningShape, b: OpeningShape) -> float:
    if not a.system and not b.system:
        return 1.0
    longest = max(len(a.system), len(b.system))
    return max(_jaccard(a.lines, b.lines), common_prefix(a.system, b.system) / longest)

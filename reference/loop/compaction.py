"""Compaction: shadowing old surface nodes behind a summary, under token pressure.

Implements docs/spec.md PREFIX-7 and the compaction behaviour of the anchor
(anchor-spec 1.8 and 7.1). `Compactor` is a pre-step listener: before the
step's boundary it estimates the size of the request about to be built,
counting the session prefix it is handed (the value this instance will log
and send) plus the derived history and the system prompt. At or above the
threshold it appends, inside the turn and outside any step:

1. ``compact/start {turn}``;
2. ``compact/summary {summary, shadowedRange, shadowedSeqs,
   shadowedTokenCount, model}`` (log-only provenance);
3. one ``user/message`` from source ``{"kind": "plugin", "plugin":
   "compact"}`` holding the summary, with ``surfaceOp: {"op": "replace",
   "start": S, "end": E}`` over the shadowed nodes and ``sourceEventSeqs``
   naming ``compact/start``, ``compact/summary`` and every shadowed node
   (SURF-3, SURF-4);
4. ``compact/end {turn}``.

It never writes a header event and cannot touch the system prompt, the
tools, the config or the prefix: those live in header state, which never
enters the surface. The next request therefore resends from the summary on
(the log's replace explains why it does not extend the previous one) while
its system, tools and prefix stay byte-identical.

The summary is produced by ``summarize(messages) -> str``; the default is a
deterministic digest, so logs stay reproducible.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from reqfold.reference.json_values import JsonObject, canonical_json, copy_json
from reqfold.reference.loop.freeze import thaw
from reqfold.reference.messages import derive_event_message

if TYPE_CHECKING:
    from reqfold.reference.loop.contexts import PreStepContext

COMPACT_SOURCE: JsonObject = {"kind": "plugin", "plugin": "compact"}

Summarize = Callable[[list[JsonObject]], Awaitable[str]]


def _tokens(text: str, chars_per_token: int) -> int:
    return math.ceil(len(text) / chars_per_token)


def estimate_tokens(
    messages: Sequence[Any], system: str = "", *, chars_per_token: int = 4
) -> int:
    """A character-count estimate of a request's size (anchor 7.1's heuristic)."""
    total = _tokens(system, chars_per_token)
    for message in messages:
        total += 4
        for block in message.get("content", ()):
            kind = block.get("type")
            if kind in ("text", "reasoning"):
                total += _tokens(block.get("text", ""), chars_per_token) + 4
            elif kind == "tool-call":
                total += 4 + _tokens(block.get("name", ""), chars_per_token)
                total += _tokens(block.get("arguments", ""), chars_per_token)
            elif kind == "tool-result":
                inner = {"content": block.get("content", ())}
                total += estimate_tokens([inner], chars_per_token=chars_per_token)
            else:
                total += 4 + _tokens(canonical_json(thaw(block)), chars_per_token)
    return total


async def digest_summary(messages: list[JsonObject]) -> str:
    """The default summary: one line per shadowed message, first 40 characters."""
    lines = []
    for message in messages:
        text = "".join(
            block.get("text", "")
            for block in message.get("content", [])
            if block.get("type") == "text"
        )
        lines.append(f"- {message.get('role')}: {text[:40]}")
    return "Summary of the conversation so far:\n" + "\n".join(lines)


class Compactor:
    """A pre-step listener that compacts the surface at a token threshold.

    Args:
        threshold_tokens: compact when the estimate reaches this many tokens.
        summarize: produces the summary text from the shadowed messages.
        model: recorded on ``compact/summary`` (who summarised).
    """

    def __init__(
        self,
        *,
        threshold_tokens: int,
        summarize: Summarize = digest_summary,
        model: str = "digest",
    ) -> None:
        self.threshold_tokens = threshold_tokens
        self.summarize = summarize
        self.model = model
        self.estimates: list[int] = []
        """Every estimate made, in order (tests read the pressure seen)."""

    def pressure(self, context: PreStepContext) -> int:
        """Tokens of the next request: prefix + derived history + system.

        Implements: PREFIX-7 (the prefix counts toward pressure, never shrinks).
        """
        messages = [*thaw(context.session_prefix)]
        messages += context.loop.session.derive_messages()
        return estimate_tokens(messages, context.system)

    async def __call__(self, context: PreStepContext) -> None:
        estimate = self.pressure(context)
        self.estimates.append(estimate)
        if estimate < self.threshold_tokens:
            return
        loop = context.loop
        session = loop.session
        surface = session.surface
        # Keep the current prompt: shadow everything before the last user/message.
        users = [
            i for i, seq in enumerate(surface) if session[seq]["type"] == "user/message"
        ]
        cut = users[-1] if users else len(surface)
        shadowed = surface[:cut]
        if len(shadowed) < 2:
            return
        start = loop.append("compact/start", {"turn": context.turn})
        # Copies: a projection shares its content with the logged event, and
        # the summarizer is pluggable code that must not reach the log.
        messages = [
            copy_json(message)
            for seq in shadowed
            if (message := derive_event_message(session[seq])) is not None
        ]
        summary = await self.summarize(messages)
        record = loop.append(
            "compact/summary",
            {
                "summary": summary,
                "shadowedRange": {"start": shadowed[0], "end": shadowed[-1]},
                "shadowedSeqs": shadowed,
                "shadowedTokenCount": estimate_tokens(messages),
                "model": self.model,
            },
        )
        loop.append(
            "user/message",
            {"content": [{"type": "text", "text": summary}], "source": COMPACT_SOURCE},
            surface_op={"op": "replace", "start": shadowed[0], "end": shadowed[-1]},
            source_event_seqs=[start["seq"], record["seq"], *shadowed],
        )
        loop.append("compact/end", {"turn": context.turn})

"""The providers' own cache diagnostics, answered the way the real APIs do.

Two providers tell a harness that opts in why a request could not reuse
the cache of an earlier one it names
(docs/fake-provider.md, "The providers' own cache diagnostics"):

- Anthropic messages: a request's `diagnostics.previous_message_id` names
  an earlier message; the response's `diagnostics.cache_miss_reason` has a
  `type` of `model_changed`, `tools_changed`, `system_changed`,
  `messages_changed` (each with `cache_missed_input_tokens`),
  `previous_message_not_found` or `unavailable` (model, system and tools
  match but another prompt-affecting setting, `thinking` or
  `tool_choice`, differs); `diagnostics` is null when nothing diverged.
- OpenAI Responses: `prompt_cache_options.comparison_response_id` names an
  earlier response; the response's `prompt_cache_diagnostics` is
  `cache_hit`, `comparison_response_not_found`, or `cache_miss` with a
  `reason` (`model_changed`, `prompt_cache_key_changed`, `tools_changed`,
  `text_format_changed`, `reasoning_effort_changed`, `verbosity_changed`,
  `input_changed`), `cache_missed_tokens` and
  `comparison_reusable_tokens`.

Both compare the request's structure with the named one's, section by
section in prompt order, not whether the cache hit. The fake keeps a
`Fingerprint` per answered request (segment digests, where they end,
their section, the settings that matter) in a bounded `FingerprintStore`,
and names the section of the first segment that differs. The missed
tokens are the named request's prompt tokens from that point on.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field

from reqfold.fakes.jsontypes import JsonObject
from reqfold.fakes.prompt import RenderedPrompt, Segment

SECTIONS = ("tools", "system", "params", "messages")
"""The sections a prompt's segments belong to."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Fingerprint:
    """What a provider keeps of a request to compare a later one with it."""

    model: str
    digests: tuple[bytes, ...]
    ends: tuple[int, ...]
    sections: tuple[str, ...]
    settings: Mapping[str, str]  # compact JSON of each cache-relevant setting

    @property
    def n_tokens(self) -> int:
        """The request's prompt tokens."""
        return self.ends[-1] if self.ends else 0

    def of(self, section: str) -> list[bytes]:
        """The digests of one section's segments, in order."""
        return [
            digest
            for digest, where in zip(self.digests, self.sections, strict=True)
            if where == section
        ]


def section_of(segment: Segment) -> str:
    """The section a prompt segment belongs to."""
    if segment.path == "params":
        return "params"
    if segment.label == "tool:":
        return "tools"
    if segment.message_index is None:
        return "system"
    return "messages"


def fingerprint(
    model: str, prompt: RenderedPrompt, settings: Mapping[str, str]
) -> Fingerprint:
    """The fingerprint of a rendered prompt."""
    return Fingerprint(
        model=model,
        digests=prompt.digests,
        ends=prompt.ends,
        sections=tuple(section_of(segment) for segment in prompt.segments),
        settings=dict(settings),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Divergence:
    """Where a request first differs from the one it is compared with."""

    section: str  # one of SECTIONS, or "model"
    missed_tokens: int  # the earlier request's tokens from there on
    setting: str | None = None  # the setting that differs, for "params"


def diverge(earlier: Fingerprint, current: Fingerprint) -> Divergence | None:
    """The first difference of `current` from `earlier`; `None` when
    `current` repeats or extends it.

    The section named is the first, in the current prompt's order, whose
    segments differ (for the messages: do not start with the earlier
    ones), so a tool added at the end of the tools is `tools`, not the
    system prompt that now sits where the earlier request had it.
    """
    if earlier.model != current.model:
        return Divergence(section="model", missed_tokens=earlier.n_tokens)
    shared = 0
    for old, new in zip(earlier.digests, current.digests, strict=False):
        if old != new:
            break
        shared += 1
    if shared == len(earlier.digests):
        return None
    start = earlier.ends[shared - 1] if shared else 0
    missed = earlier.n_tokens - start
    for section in dict.fromkeys((*current.sections, *earlier.sections)):
        mine = earlier.of(section)
        theirs = current.of(section)
        if section == "messages":
            theirs = theirs[: len(mine)]
        if mine != theirs:
            break
    else:  # pragma: no cover - the digests differ, so some section does
        section = "messages"
    setting = None
    if section == "params":
        names = sorted(set(earlier.settings) | set(current.settings))
        setting = next(
            (n for n in names if earlier.settings.get(n) != current.settings.get(n)),
            None,
        )
    return Divergence(section=section, missed_tokens=missed, setting=setting)


ANTHROPIC_REASONS = {
    "model": "model_changed",
    "tools": "tools_changed",
    "system": "system_changed",
    "messages": "messages_changed",
}


def anthropic_cache_miss(
    earlier: Fingerprint | None, current: Fingerprint
) -> JsonObject | None:
    """The `diagnostics` object of a messages response (None: no divergence)."""
    if earlier is None:
        return {"cache_miss_reason": {"type": "previous_message_not_found"}}
    divergence = diverge(earlier, current)
    if divergence is None:
        return None
    if divergence.section == "params":
        return {"cache_miss_reason": {"type": "unavailable"}}
    return {
        "cache_miss_reason": {
            "type": ANTHROPIC_REASONS[divergence.section],
            "cache_missed_input_tokens": divergence.missed_tokens,
        }
    }


RESPONSES_SETTING_REASONS = {
    "format": "text_format_changed",
    "verbosity": "verbosity_changed",
    "effort": "reasoning_effort_changed",
}


def responses_cache_diagnostics(
    earlier: Fingerprint | None, current: Fingerprint
) -> JsonObject:
    """The `prompt_cache_diagnostics` object of a response."""
    if earlier is None:
        return {"type": "comparison_response_not_found"}
    divergence = diverge(earlier, current)
    key = "prompt_cache_key"
    if divergence is not None and divergence.section == "model":
        reason = "model_changed"
    elif earlier.settings.get(key) != current.settings.get(key):
        reason = "prompt_cache_key_changed"
        divergence = Divergence(section="key", missed_tokens=earlier.n_tokens)
    elif divergence is None:
        return {"type": "cache_hit"}
    elif divergence.section == "tools":
        reason = "tools_changed"
    elif divergence.section == "params":
        reason = RESPONSES_SETTING_REASONS.get(
            divergence.setting or "", "input_changed"
        )
    else:
        reason = "input_changed"
    return {
        "type": "cache_miss",
        "reason": reason,
        "cache_missed_tokens": divergence.missed_tokens,
        "comparison_reusable_tokens": earlier.n_tokens,
    }


@dataclass(frozen=True, slots=True, kw_only=True)
class NativeDiagnosis:
    """What a request gets of the provider's own cache diagnostics."""

    kept: bool = False
    """Keep this request's fingerprint (a later request may name it)."""
    members: JsonObject = field(default_factory=dict)
    """Members added to the answer (`diagnostics`, `prompt_cache_diagnostics`)."""
    compared: bool = False
    """The request named an earlier answer: the members say how it relates."""


NOT_ASKED = NativeDiagnosis()


class FingerprintStore:
    """Fingerprints by response or message id, the `limit` most recent.

    Thread-safe. An id forgotten past the bound is "not found", as the
    providers say of a record they no longer hold.
    """

    def __init__(self, limit: int = 64) -> None:
        self.limit = limit
        self._kept: OrderedDict[str, Fingerprint] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, answer_id: str) -> Fingerprint | None:
        """The fingerprint kept under `answer_id`, if any."""
        with self._lock:
            return self._kept.get(answer_id)

    def put(self, answer_id: str, value: Fingerprint) -> None:
        """Keep `value` under `answer_id`."""
        with self._lock:
            self._kept[answer_id] = value
            self._kept.move_to_end(answer_id)
            while len(self._kept) > self.limit:
                self._kept.popitem(last=False)

    def clear(self) -> None:
        """Forget every fingerprint."""
        with self._lock:
            self._kept.clear()

"""Why a request stopped extending the previous one: a cause, with evidence.

Pure: two rendered prompts and where they first differ in, one `Cause`
out. The cause is read from the two sides of the first difference (the
text around it, the segment it sits in, the request's shape), in this
order: a model change; a parameter rendered into the prompt (Anthropic's
`tool_choice`, `thinking`); a change of tools (added, removed, reordered, one
tool's schema changed); cache-control markers moved (benign: they are not
prompt text); a shape-only change (the same text as a string or as one
text block, member order, whitespace); date or time text; a hash, uuid or
nonce; an environment snapshot (folder tree, git status, cwd, OS); the
system text edited; the history rewritten (reasoning stripped, tool output
truncated, messages dropped, a summary inserted, a message edited).
Anything else is `unclassified`, said as such.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Protocol

from reqfold.conformance.cache.prompts import Prompt, text_of
from reqfold.fakes.diagnostics import EXCERPT_BEFORE, Divergence, describe_divergence
from reqfold.fakes.jsontypes import JsonValue
from reqfold.fakes.prompt import Segment

BENIGN = frozenset({"cache-markers"})
"""Causes that cost nothing: the prompt text did not change."""

EXPECTED_SHAPES = frozenset(
    {"model-change", "summary-inserted", "conversation-cleared"}
)
"""Causes recognised as an expected break without a declaration."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Cause:
    """A divergence's cause and the evidence for it."""

    name: str
    detail: str
    field: str
    earlier: str
    current: str


class _CauseMaker(Protocol):
    def __call__(self, name: str, detail: str = "") -> Cause: ...


_DATE = re.compile(
    r"\d{4}-\d{2}-\d{2}"
    r"|\d{1,2}:\d{2}(?::\d{2})?"
    r"|\d{1,2}/\d{1,2}/\d{2,4}"
    r"|\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.? \d{1,2}\b"
    r"|\b\d{1,2} (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\b"
    r"|\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*day\b"
    r"|\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun),"
)
_NONCE = re.compile(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
    r"|\b(?=[0-9a-fA-F]*\d)(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{8,}\b"
    r"|\b(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{20,}\b"
)
_ENVIRONMENT = re.compile(
    r"(?i)\bgit\b|\bbranch\b|\bstatus\b|\bcommit\b|\bcwd\b|working director"
    r"|\bdirectory\b|\bfolder\b|\bplatform\b|\bos\b|\blinux\b|\bdarwin\b"
    r"|\bfiles?\b|^\s*(?:[MADRCU?]{1,2}) \S|[\w.-]+/[\w./-]+|\b[\w-]+\.[a-z]{1,4}\b"
    r"|<env>|├|└|│",
    re.MULTILINE,
)
_SUMMARY = re.compile(r"(?i)summar|compact|condens")


def classify(
    earlier: Prompt, current: Prompt, shared: int, *, resumed: bool = False
) -> Cause:
    """The cause of `current` not extending `earlier`, which share `shared` segments.

    `resumed`: `current` is the first request of a resumed process, which must
    continue the conversation, so it is never read as a cleared one.
    """
    if shared >= len(current.segments) or shared >= len(earlier.segments):
        if current.message_count < earlier.message_count or shared < len(
            earlier.segments
        ):
            return _messages_dropped(earlier, current, shared)
        return Cause(name="unclassified", detail="", field="", earlier="", current="")
    left, right = earlier.segments[shared], current.segments[shared]
    evidence = describe_divergence(left, right, current.start_of(shared))
    field, before, after = evidence["field"], evidence["earlier"], evidence["current"]

    def cause(name: str, detail: str = "") -> Cause:
        return Cause(
            name=name, detail=detail, field=field, earlier=before, current=after
        )

    if earlier.model != current.model:
        return cause("model-change", f"{earlier.model} -> {current.model}")
    if left.path == "params" or right.path == "params":
        return cause("parameters", "tool_choice or thinking changed")
    in_opening = shared < earlier.opening or shared < current.opening
    if in_opening and earlier.tool_names != current.tool_names:
        return cause(*_tools_change(earlier.tool_names, current.tool_names))
    if _plain(left.value, markers=True) == _plain(right.value, markers=True):
        return cause("cache-markers", "cache_control markers moved")
    if _plain(left.value, markers=False) == _plain(right.value, markers=False):
        return cause("shape-only", "the same text in another JSON shape")
    if not in_opening:
        rewritten = _history(earlier, current, shared, cause, resumed=resumed)
        if rewritten is not None:
            return rewritten
    around_left, around_right = _around(evidence)
    if _DATE.search(around_left) or _DATE.search(around_right):
        return cause("date-time", _where(left, in_opening))
    if _NONCE.search(around_left) or _NONCE.search(around_right):
        return cause("nonce", _where(left, in_opening))
    if left.path.startswith("tools[") and right.path.startswith("tools["):
        return cause("tool-changed", _tool_label(left))
    if _ENVIRONMENT.search(around_left) or _ENVIRONMENT.search(around_right):
        return cause("environment", _where(left, in_opening))
    if in_opening:
        return cause("system-edited", _where(left, in_opening))
    return cause("message-edited", left.path)


def _history(
    earlier: Prompt,
    current: Prompt,
    position: int,
    cause: _CauseMaker,
    *,
    resumed: bool,
) -> Cause | None:
    """A rewrite of the history recognised by its shape, if any, at the
    first differing segment `position`."""
    left, right = earlier.segments[position], current.segments[position]
    shifted = _shifted(earlier, current, position)
    if shifted:
        return cause("messages-dropped", f"{shifted} message(s) dropped before it")
    if _SUMMARY.search(text_of(right.value)) and (
        current.message_count < earlier.message_count
        or _moved_down(earlier, current, position)
    ):
        return cause("summary-inserted", "a summary in place of earlier messages")
    if not resumed and _cleared(earlier, current):
        return cause("conversation-cleared", "the conversation restarted")
    if current.message_count < earlier.message_count:
        if _SUMMARY.search(text_of(right.value)):
            return cause("summary-inserted", "earlier messages replaced by a summary")
        return cause(
            "messages-dropped",
            f"{earlier.message_count - current.message_count} message(s) fewer",
        )
    if _has_reasoning(left.value) and not _has_reasoning(right.value):
        return cause("reasoning-stripped", f"from {left.path}")
    if _is_tool_output(left.value) and len(text_of(right.value)) < len(
        text_of(left.value)
    ):
        return cause("tool-output-truncated", f"{left.path} shortened")
    if left.path != right.path and _SUMMARY.search(text_of(right.value)):
        return cause("summary-inserted", "a summary in place of earlier messages")
    return None


def _shifted(earlier: Prompt, current: Prompt, position: int) -> int:
    """How far earlier messages moved up: the segment now at the first
    difference sat that many messages later in the earlier request."""
    left = earlier.segments[position]
    if position >= len(current.digests):
        return 0
    digest = current.digests[position]
    for later in range(position + 1, len(earlier.digests)):
        if earlier.digests[later] == digest:
            here, there = left.message_index, earlier.segments[later].message_index
            if here is not None and there is not None:
                return there - here
            return later - position
    return 0


def _moved_down(earlier: Prompt, current: Prompt, position: int) -> bool:
    """The earlier segment at the first difference is still there, later:
    something was inserted before it."""
    digest = earlier.digests[position]
    return digest in current.digests[position + 1 :]


def _messages_dropped(earlier: Prompt, current: Prompt, shared: int) -> Cause:
    dropped = earlier.message_count - current.message_count
    kept = current.segments[shared - 1].path if shared else "nothing"
    return Cause(
        name="messages-dropped",
        detail=f"{dropped} trailing message(s) fewer",
        field=kept,
        earlier=f"{earlier.message_count} messages",
        current=f"{current.message_count} messages",
    )


def _cleared(earlier: Prompt, current: Prompt) -> bool:
    """A `/clear`: the earlier request held a conversation (more than one
    message) and the current one holds fewer messages. A harness that never
    sends its history (one message each time) is not clearing anything."""
    before = _conversation_messages(earlier)
    return before > 1 and _conversation_messages(current) < before


def _conversation_messages(prompt: Prompt) -> int:
    """How many messages follow the opening (a message may be several segments)."""
    conversation = prompt.segments[prompt.opening :]
    indexed = {s.message_index for s in conversation if s.message_index is not None}
    return len(indexed) + sum(1 for s in conversation if s.message_index is None)


def _tools_change(
    earlier: tuple[str, ...], current: tuple[str, ...]
) -> tuple[str, str]:
    added = [name for name in current if name not in earlier]
    removed = [name for name in earlier if name not in current]
    if added and not removed:
        return "tools-added", ", ".join(added)
    if removed and not added:
        return "tools-removed", ", ".join(removed)
    if added:
        return "tools-added", f"{', '.join(added)} (removed {', '.join(removed)})"
    return "tools-reordered", " ".join(current)


def _tool_label(segment: Segment) -> str:
    value = segment.value
    name = ""
    if isinstance(value, dict):
        function = value.get("function")
        raw = value.get("name") or (
            function.get("name") if isinstance(function, dict) else ""
        )
        name = raw if isinstance(raw, str) else ""
    return f"{name or segment.path}: its schema or description changed"


def _where(segment: Segment, in_opening: bool) -> str:
    part = "the opening" if in_opening else "the conversation"
    return f"in {part} ({segment.path})"


def _around(evidence: Divergence) -> tuple[str, str]:
    """The line around the first difference, on each side (from the excerpts)."""
    offset = evidence["char_offset"]
    position = EXCERPT_BEFORE + 1 if offset > EXCERPT_BEFORE else offset
    return (
        _line_at(evidence["earlier"], position),
        _line_at(evidence["current"], position),
    )


def _line_at(text: str, position: int) -> str:
    start = text.rfind("\n", 0, position) + 1
    end = text.find("\n", position)
    return text[start : end if end >= 0 else len(text)]


def _plain(value: JsonValue, *, markers: bool) -> str:
    """A form of `value` that ignores cache markers (and, unless `markers`, shape)."""
    stripped = _without_markers(value)
    if markers:
        return json.dumps(stripped, ensure_ascii=False, separators=(",", ":"))
    return " ".join(
        json.dumps(_text_shape(stripped), sort_keys=True, ensure_ascii=False).split()
    )


def _without_markers(value: JsonValue) -> JsonValue:
    if isinstance(value, dict):
        return {
            key: _without_markers(item)
            for key, item in value.items()
            if key != "cache_control"
        }
    if isinstance(value, list):
        return [_without_markers(item) for item in value]
    return value


def _text_shape(value: JsonValue) -> JsonValue:
    """One text block and a plain string read alike (documented shorthand)."""
    if isinstance(value, dict):
        value = {key: _text_shape(item) for key, item in value.items()}
        if set(value) == {"type", "text"} and value["type"] == "text":
            return value["text"]
        return value
    if isinstance(value, list):
        items = [_text_shape(item) for item in value]
        if len(items) == 1 and isinstance(items[0], str):
            return items[0]
        return items
    return value


def _has_reasoning(value: JsonValue) -> bool:
    if isinstance(value, dict):
        if value.get("reasoning_content") or value.get("type") in (
            "thinking",
            "redacted_thinking",
        ):
            return True
        content = value.get("content")
        if isinstance(content, list):
            return any(_has_reasoning(item) for item in content)
    return False


def _is_tool_output(value: JsonValue) -> bool:
    return isinstance(value, dict) and (
        value.get("role") == "tool" or value.get("type") == "tool_result"
    )

"""The wire dialect of a captured request, from its path or its body's shape.

The log rebuilds chat-completions requests only (the wire mapping,
docs/spec.md section 12), so ``reqfold check --requests`` compares those
and leaves requests in another dialect out, counted by dialect, rather
than failing a log whose harness spoke Anthropic Messages or the Responses
API (the probe's `Evidence.wire_compared`, for a capture file). The names
and paths are the fake's dialect registry's (`serving_name`: a dialect's
name, ``reqfold fake serve --dialect``, or its wire format's where several
rows speak it), so a dialect added there is known here. The registry is
imported when a capture is read, not with this module: checking a log
alone imports nothing of the fake (tests/architecture/
test_start_up_imports.py). `CHAT`, `ANTHROPIC` and `RESPONSES` are the
names of the three wire formats shipped, read from the registry on first
use.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Sequence
from typing import Any


@functools.cache
def _shipped() -> dict[str, str]:
    """The registry's names of the wire formats shipped, by constant."""
    from reqfold.fakes.dialects import registry
    from reqfold.fakes.dialects.anthropic import MESSAGES_PATHS
    from reqfold.fakes.dialects.openai_chat import CHAT_PATHS
    from reqfold.fakes.dialects.responses import RESPONSES_PATHS

    names: dict[str, str] = {}
    for constant, paths in (
        ("CHAT", CHAT_PATHS),
        ("ANTHROPIC", MESSAGES_PATHS),
        ("RESPONSES", RESPONSES_PATHS),
    ):
        name = registry.serving_name(paths[0])
        if name is None:  # a wire module's path no registry row serves
            raise ValueError(f"no dialect of the registry serves {paths[0]!r}")
        names[constant] = name
    return names


def __getattr__(name: str) -> str:
    """`CHAT` (what the compared chat-completions requests are called),
    `ANTHROPIC`, `RESPONSES`: from the registry, on first use."""
    if name in ("CHAT", "ANTHROPIC", "RESPONSES"):  # not `__path__` and the like
        return _shipped()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def compared_dialect() -> str:
    """The name of the requests the log is compared with (chat completions)."""
    return _shipped()["CHAT"]


ANTHROPIC_BLOCKS = frozenset(
    {"tool_use", "tool_result", "thinking", "redacted_thinking", "document"}
)
"""Content block types only the Messages API has (a chat-completions part is
``text``, ``image_url``, ``input_audio`` or ``file``)."""


def path_dialect(path: str) -> str | None:
    """The dialect a captured request's path is served in; None for a path of
    none of them (``/v1/models``, a count of tokens: not a request to compare)."""
    from reqfold.fakes.dialects import registry  # with a capture only

    endings = {ending for row in registry.REGISTRY for ending in row.paths}
    for ending in sorted(endings, key=len, reverse=True):
        if path.endswith(ending):
            return registry.serving_name(ending)
    return None


def body_dialect(body: dict[str, Any]) -> str:
    """The dialect a bare request body is written in, from members only one
    dialect has: ``input`` without ``messages`` (Responses); a top-level
    ``system``, a tool's ``input_schema`` or a Messages-only content block
    (Anthropic). Anything else is read as chat completions, so a body with
    none of these marks is still compared."""
    shipped = _shipped()
    if "input" in body and "messages" not in body:
        return shipped["RESPONSES"]
    if "system" in body:
        return shipped["ANTHROPIC"]
    tools = body.get("tools")
    if isinstance(tools, list) and any(
        isinstance(tool, dict) and "input_schema" in tool for tool in tools
    ):
        return shipped["ANTHROPIC"]
    messages = body.get("messages")
    if isinstance(messages, list):
        for message in messages:
            content = message.get("content") if isinstance(message, dict) else None
            if isinstance(content, list) and any(
                isinstance(block, dict) and block.get("type") in ANTHROPIC_BLOCKS
                for block in content
            ):
                return shipped["ANTHROPIC"]
    return shipped["CHAT"]


def uncompared_note(
    source: str, uncompared: Counter[str], *, only: bool, rules: Sequence[str]
) -> str:
    """What a check says of the captured requests it left out by dialect
    (`only`: the capture held no other request, so nothing was compared;
    `rules`: those a comparison would have judged)."""
    counts = ", ".join(
        f"{count} in the {dialect} dialect"
        for dialect, count in sorted(uncompared.items())
    )
    if not only:
        return (
            f"--requests {source}: {counts} not compared with the log (it"
            " rebuilds chat-completions requests, docs/spec.md section 12);"
            " its chat-completions requests were"
        )
    return (
        f"--requests {source}: the requests went out in another dialect"
        f" ({counts}); the log rebuilds chat-completions requests (the wire"
        " mapping, docs/spec.md section 12), so none was compared with it: the"
        f" reconstruction rules ({', '.join(rules)}) are skipped; the log's own"
        " rules were checked"
    )

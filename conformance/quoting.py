"""Quoting what an implementation sent, within a bound of size and depth.

A wrong answer is shown to the user (a check's message on the terminal, a
reproduction in each report). Quoted whole, a large answer fills the
terminal, and a deeply nested one, indented in the JSON and Markdown
reports, grows quadratically with its depth (docs/benchmarks.md, "Numbers
behind the code"). `bounded` keeps
the outline of a value: at most `MAX_DEPTH` levels, `MAX_ITEMS` items or
members per level, `MAX_STRING` characters per string and `MAX_NODES`
values in all; each cut leaves a marker that says how much was cut
(``"<cut: 9950 more items>"``). A message quotes at most `MAX_TEXT`
characters of the JSON text of that outline. Pure, and linear in what is
kept.
"""

from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 12
MAX_ITEMS = 50
MAX_STRING = 500
MAX_NODES = 2000
MAX_TEXT = 2000


class _Budget:
    def __init__(self, nodes: int) -> None:
        self.nodes = nodes


def _size(value: Any) -> str:
    if isinstance(value, list):
        return f"an array of {len(value)} items"
    return f"an object of {len(value)} members"


def bounded(value: Any, *, depth: int = MAX_DEPTH, nodes: int = MAX_NODES) -> Any:
    """`value` cut to a bounded outline (module docstring); unchanged when it
    is within every bound."""
    return _bounded(value, depth, _Budget(nodes))


def _bounded(value: Any, depth: int, budget: _Budget) -> Any:
    budget.nodes -= 1
    if isinstance(value, str):
        if len(value) <= MAX_STRING:
            return value
        return f"{value[:MAX_STRING]}<cut: {len(value) - MAX_STRING} more characters>"
    if not isinstance(value, list | dict):
        return value
    if depth <= 0 or budget.nodes <= 0:
        return f"<cut: {_size(value)}, nested too deep or too many values>"
    if isinstance(value, list):
        kept: list[Any] = []
        for item in value[:MAX_ITEMS]:
            if budget.nodes <= 0:
                break
            kept.append(_bounded(item, depth - 1, budget))
        if len(kept) < len(value):
            kept.append(f"<cut: {len(value) - len(kept)} more items>")
        return kept
    members: dict[str, Any] = {}
    for count, (key, item) in enumerate(value.items()):
        if count >= MAX_ITEMS or budget.nodes <= 0:
            members["<cut>"] = f"{len(value) - count} more members"
            break
        members[_bounded(key, 1, budget)] = _bounded(item, depth - 1, budget)
    return members


MAX_LINE = 120
"""Bytes of a line that is not what it should be shown in a message."""


def quoted_bytes(data: bytes, limit: int = MAX_LINE) -> str:
    """`data` as a JSON string, escaped and cut after `limit` bytes (a marker
    says how many more), for a one-line message: never Python's ``b'...'``.

    A byte that is not UTF-8 shows as its ``\\xNN`` escape.
    """
    text = data[:limit].decode("utf-8", "backslashreplace")
    more = f" (and {len(data) - limit} more bytes)" if len(data) > limit else ""
    return json.dumps(text, ensure_ascii=False) + more


def quoted_value(value: Any) -> str:
    """A JSON value in a message: its JSON text, bounded, on one line."""
    text = json.dumps(bounded(value), ensure_ascii=False, default=str)
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + "…"

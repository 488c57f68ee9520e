"""Building messages and reading logs in tests: one spelling for every test.

`text` is one text content block, `user` a user chat message holding one,
and `types` the event types of a log in order (a `SessionLog`, or any
iterable of events). Importable as ``messages`` (`pythonpath =
["tests/support"]` in pyproject.toml).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def text(value: str) -> dict[str, Any]:
    """One text content block: ``{"type": "text", "text": value}``."""
    return {"type": "text", "text": value}


def user(value: str) -> dict[str, Any]:
    """A user chat message whose content is one text block."""
    return {"role": "user", "content": [text(value)]}


def types(events: Iterable[Mapping[str, Any]]) -> list[str]:
    """The ``type`` of each event, in order."""
    return [event["type"] for event in events]

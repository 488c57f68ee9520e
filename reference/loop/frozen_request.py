"""The request a loop step sends: built from the log, frozen before dispatch.

Implements docs/spec.md REQ-7: once the writer has logged the step's header
event, nothing can change what is sent. A `FrozenRequest` is a frozen
dataclass whose header and messages are deep-frozen JSON
(`reqfold.reference.loop.freeze`): assigning an attribute, setting a member or
appending a message raises. The provider client works from `plain_header`
and `plain_messages`, which are fresh mutable copies, so it cannot reach
back into the request either.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from reqfold.reference.header import Header
from reqfold.reference.json_values import JsonObject
from reqfold.reference.loop.freeze import FrozenObject, deep_freeze, thaw
from reqfold.reference.request import build_chat_body


@dataclass(frozen=True, slots=True, kw_only=True)
class FrozenRequest:
    """One step's request: its header and messages, read-only all the way down."""

    turn: int
    step: int
    boundary: int
    """Seq of the step's ``step/start`` (REQ-1)."""
    header: FrozenObject
    messages: tuple[FrozenObject, ...]

    @classmethod
    def build(
        cls,
        *,
        turn: int,
        step: int,
        boundary: int,
        header: Header,
        messages: list[JsonObject],
    ) -> FrozenRequest:
        """Freeze deep copies of `header` and `messages` into a request."""
        return cls(
            turn=turn,
            step=step,
            boundary=boundary,
            header=deep_freeze(header),
            messages=deep_freeze(messages),
        )

    def plain_header(self) -> Header:
        """A mutable copy of the header (for the codec and the wire mapping)."""
        header: Header = thaw(self.header)
        return header

    def plain_messages(self) -> list[JsonObject]:
        """A mutable copy of the messages."""
        messages: list[JsonObject] = thaw(self.messages)
        return messages

    def body(
        self, *, stream: bool = False, settings: Mapping[str, Any] | None = None
    ) -> JsonObject:
        """The chat-completions body (WIRE-1 .. WIRE-5)."""
        return build_chat_body(
            self.plain_header(),
            self.plain_messages(),
            stream=stream,
            settings=dict(settings) if settings else None,
        )

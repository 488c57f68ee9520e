"""The three revisions of the contract (docs/spec.md, "Revisions").

``header-events``: header snapshots and deltas, fold/diff/apply, the writer,
the step/start boundary. ``request-messages`` adds per-request framing
messages recorded as ``messagePrefix``/``messageSuffix``. ``session-prefix``
(the final design) keeps only ``messagePrefix``, composed once per instance.
"""

from __future__ import annotations

from enum import StrEnum


class Revision(StrEnum):
    """A revision an implementation declares and a vector or rule applies to."""

    HEADER_EVENTS = "header-events"
    REQUEST_MESSAGES = "request-messages"
    SESSION_PREFIX = "session-prefix"

    @property
    def message_fields(self) -> tuple[str, ...]:
        """The header's message-array fields in this revision, in key order."""
        if self is Revision.REQUEST_MESSAGES:
            return ("messagePrefix", "messageSuffix")
        if self is Revision.SESSION_PREFIX:
            return ("messagePrefix",)
        return ()

    @property
    def header_fields(self) -> tuple[str, ...]:
        """Every header field in this revision, in canonical key order."""
        return ("config", "system", "tools", *self.message_fields)

    @property
    def delta_arms(self) -> tuple[str, ...]:
        """Every delta arm in this revision, in the order diff emits them."""
        return ("system", "tools", "config", *self.message_fields)


LATEST = Revision.SESSION_PREFIX
ALL_REVISIONS = tuple(Revision)


def parse_revision(name: str) -> Revision:
    """Map a revision name to a `Revision`; ValueError names the valid ones."""
    try:
        return Revision(name)
    except ValueError:
        valid = ", ".join(r.value for r in Revision)
        raise ValueError(
            f"unknown revision {name!r} (expected one of: {valid})"
        ) from None

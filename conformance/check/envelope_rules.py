"""The envelope rules, checked on every event line the reader yields.

Implements docs/spec.md LOG-1 (the type and time members; the member and
JSON checks are `reqfold.conformance.check.lines`'), LOG-2 (seqs run 0, 1, 2, ...),
LOG-3 (data is an object), LOG-4 (surfaceOp and sourceEventSeqs only on
surface types), LOG-5 (through the reference's `sources_problem`) and LOG-7
(unknown event types are counted, not refused).

Theory of operation. `EnvelopeRules.check` returns the findings of one
event's envelope and the event's seq (the expected one when the line's seq
could not be read). It keeps the next expected seq, and the *slack* a damaged
line leaves (that line may have held an event, so the next seq may be one
further on without a gap being reported).
"""

from __future__ import annotations

import operator
import struct
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from msgspec import UNSET, Raw

from reqfold.conformance.check.findings import Finding, finding
from reqfold.conformance.check.lines import MISSING_DATA, Envelope
from reqfold.reference.header import DELTA, SNAPSHOT
from reqfold.reference.messages import SURFACE_TYPES
from reqfold.reference.session_log import sources_problem

UNKNOWN_TYPES_KEPT = 100
"""Distinct unknown event types counted by name; the rest are counted together."""

KNOWN_TYPES = frozenset(
    {
        "turn/start",
        "turn/end",
        "step/start",
        "step/end",
        *SURFACE_TYPES,
        "assistant/chunk",
        "tool/call",
        "prompt/blocked",
        "todo/write",
        SNAPSHOT,
        DELTA,
        "compact/start",
        "compact/summary",
        "compact/end",
        "hook/invoked",
        "hook/result",
    }
)
"""Event types the anchor vocabulary names; any other type is counted (LOG-7)."""

PLAIN_TYPES = KNOWN_TYPES - SURFACE_TYPES
"""Known types that carry neither ``surfaceOp`` nor ``sourceEventSeqs``."""


@dataclass(slots=True)
class UnknownTypes:
    """Events of types the vocabulary does not name (LOG-7), counted by type."""

    counts: Counter[str] = field(default_factory=Counter)
    other: int = 0
    """Events of unknown types beyond the first `UNKNOWN_TYPES_KEPT` types."""

    def count(self, kind: str) -> None:
        """Count one event of an unknown type, keeping at most so many types."""
        counts = self.counts
        if kind in counts or len(counts) < UNKNOWN_TYPES_KEPT:
            counts[kind] += 1
        else:
            self.other += 1


class EnvelopeRules:
    """LOG-1 .. LOG-5 and LOG-7 on each event's envelope."""

    def __init__(self) -> None:
        self.next_seq = 0
        self.slack = 0
        """Damaged lines since the last event (each may have held one)."""
        self.events = 0
        """Events checked here (the reader counts the chunks it passed over)."""
        self.unknown = UnknownTypes()

    def damaged(self) -> None:
        """A terminated line that is not JSON: it may have held an event."""
        self.slack += 1

    def common(self, event: Envelope) -> bool:
        """Whether `event`, as msgspec decoded it (seq known, type a string,
        time >= 0), is the common case, where the rules find nothing: the
        next seq, data an object, a known type, surface members only on a
        surface type, and there no sources or earlier seqs in increasing
        order (as `_sources` would pass). If so it is counted, as `check` would count
        it (which would find nothing and return ``event.seq, event.data``).
        """
        data: Any = event.data
        seq = event.seq
        if seq == self.next_seq and (
            type(data) is dict
            or (type(data) is Raw and data and _FIRST_BYTE(data) == _BRACE)
        ):  # `data_object`, inline
            kind = event.type
            sources: Any = event.sourceEventSeqs
            if (
                (
                    (kind in PLAIN_TYPES and event.surfaceOp is UNSET)
                    or kind in SURFACE_TYPES
                )
                if sources is UNSET
                else (
                    kind in SURFACE_TYPES
                    and sources
                    and sources[0] >= 0
                    and sources[-1] < seq
                    and (
                        len(sources) == 1  # a tool result's: its call
                        or all(map(_BELOW, sources, sources[1:]))  # increasing
                    )
                )
            ):
                self.next_seq = seq + 1
                self.slack = 0
                self.events += 1
                return True
        return False

    def check(
        self, event: Envelope, number: int, prechecked: bool, seq_known: bool
    ) -> tuple[int, Any, list[Finding]]:
        """The event's seq, its data as an object (None if it is none: a lazy
        body stays `msgspec.Raw`) and its envelope's findings, each rule in
        turn (`common` is the shortcut for what msgspec decoded).

        `prechecked`: the event was read strictly (`lines.explain_line`,
        which reported what it could name, and built any JSON value);
        `seq_known`: its seq is an integer.
        """
        kind = event.type
        data: Any = event.data
        out: list[Finding] = []
        if not seq_known:
            seq = self.next_seq
        else:
            seq = event.seq
            if seq != self.next_seq:
                self._seq(seq, number, out)
        # a seq that goes back does not move the expected one back (LOG-2
        # is reported once, not again when the log resumes where it was)
        self.next_seq = max(self.next_seq, seq + 1)
        self.slack = 0
        self.events += 1
        if not kind and not prechecked:
            out.append(finding("LOG-1", number, seq, "type must be a non-empty string"))
        if event.time < 0:
            out.append(
                finding(
                    "LOG-1",
                    number,
                    seq,
                    "time must be a non-negative integer (ms since the epoch)",
                    found=event.time,
                )
            )
        if type(data) is not dict:
            data = data_object(data)
            if data is None and event.data is not MISSING_DATA:
                out.append(finding("LOG-3", number, seq, "data must be a JSON object"))
        if kind not in KNOWN_TYPES and kind:
            self.unknown.count(kind)
        if event.sourceEventSeqs is not UNSET:
            self._sources(event, kind, number, seq, prechecked, out)
        if event.surfaceOp is not UNSET and kind not in SURFACE_TYPES:
            out.append(
                finding(
                    "LOG-4",
                    number,
                    seq,
                    f"{kind} is not a surface type and must not carry surfaceOp",
                )
            )
        return seq, data, out

    def _seq(self, seq: int, number: int, out: list[Finding]) -> None:
        expected = self.next_seq
        if self.slack and expected < seq <= expected + self.slack:
            return
        detail = "repeats or goes back" if seq < expected else "skips ahead"
        out.append(
            finding(
                "LOG-2",
                number,
                seq,
                f"seq {detail}: seqs run 0, 1, 2, ... without gaps or repeats",
                expected=expected,
                found=seq,
            )
        )

    def _sources(
        self,
        event: Envelope,
        kind: str,
        number: int,
        seq: int,
        prechecked: bool,
        out: list[Finding],
    ) -> None:
        sources: Any = event.sourceEventSeqs
        if kind not in SURFACE_TYPES:
            out.append(
                finding(
                    "LOG-4",
                    number,
                    seq,
                    f"{kind} is not a surface type and must not carry sourceEventSeqs",
                )
            )
        # msgspec decoded a list of integers (never booleans) unless the line
        # was read strictly; the common case is the chunks of a message, seqs
        # in increasing order (so distinct), which are valid when they start
        # at 0 or later and end before this event; the reference judges the
        # rest
        if (
            not prechecked
            and sources
            and sources[0] >= 0
            and sources[-1] < seq
            and all(map(_BELOW, sources, sources[1:]))
        ):
            return
        if sources_problem(sources, seq) is not None:
            out.append(
                finding(
                    "LOG-5",
                    number,
                    seq,
                    "sourceEventSeqs must be a non-empty list of distinct seqs of"
                    " earlier events",
                    found=sources,
                )
            )


_BELOW = operator.lt
"""Whether one seq comes before the next (`all(map(...))` over a list of
sources costs less than building the run it should be)."""
_FIRST_BYTE = struct.Struct("B").unpack_from
"""The first byte of a buffer, as a 1-tuple (a fifth of a memoryview's cost)."""
_BRACE = (ord("{"),)


def data_object(data: Any) -> Any:
    """The event's data as an object (a lazy Raw stays Raw), or None."""
    if type(data) is Raw:
        return data if data and _FIRST_BYTE(data) == _BRACE else None
    return data if isinstance(data, dict) else None

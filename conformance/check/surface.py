"""The surface of a log being checked, and its derived history on demand.

Implements docs/spec.md SURF-2 and SURF-3 (and DERIVE-1 when asked) with
bounded memory: the surface is kept as a list of seqs, and projected
messages only when the checker rebuilds requests (``--requests``). Nodes a
replace shadows are forgotten, so memory follows the surface, not the log.
This mirrors `reference.session_log.SessionLog`'s incremental derivation,
which keeps every event and so cannot serve a streaming checker.
"""

from __future__ import annotations

from dataclasses import dataclass

from reference.json_values import JsonObject


@dataclass(frozen=True, slots=True)
class ReplaceRefused:
    """Why a replace does not apply (SURF-2)."""

    message: str


class Surface:
    """The ordered seqs on the surface; with `derive`, their messages too."""

    def __init__(self, *, derive: bool = False) -> None:
        self.seqs: list[int] = []
        self.derive = derive
        self._projections: dict[int, JsonObject | None] = {}
        self._messages: list[JsonObject] | None = []

    def __len__(self) -> int:
        return len(self.seqs)

    def append(self, seq: int, message: JsonObject | None) -> None:
        """Put `seq` at the end of the surface (SURF-3)."""
        self.seqs.append(seq)
        if self.derive:
            self._projections[seq] = message
            if self._messages is not None and message is not None:
                self._messages.append(message)

    def shadowed(self, start: int, end: int) -> list[int] | ReplaceRefused:
        """The nodes a replace from `start` through `end` removes (SURF-2)."""
        positions: dict[str, int] = {}
        for name, node in (("start", start), ("end", end)):
            try:
                positions[name] = self.seqs.index(node)
            except ValueError:
                return ReplaceRefused(
                    f"replace {name} seq {node} is not on the surface"
                )
        if positions["start"] > positions["end"]:
            return ReplaceRefused(
                f"replace start seq {start} sits after end seq {end} on the surface"
            )
        return list(self.seqs[positions["start"] : positions["end"] + 1])

    def replace(
        self, seq: int, shadowed: list[int], message: JsonObject | None
    ) -> None:
        """Put `seq` in place of the `shadowed` run of nodes (SURF-3)."""
        first = self.seqs.index(shadowed[0])
        self.seqs[first : first + len(shadowed)] = [seq]
        if self.derive:
            for node in shadowed:
                self._projections.pop(node, None)
            self._projections[seq] = message
            self._messages = None

    def messages(self) -> list[JsonObject]:
        """A new list of the derived history (DERIVE-1); needs `derive`."""
        if self._messages is None:
            self._messages = [
                message
                for seq in self.seqs
                if (message := self._projections[seq]) is not None
            ]
        return list(self._messages)

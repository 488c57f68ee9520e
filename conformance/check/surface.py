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
    """The ordered seqs on the surface; with `derive`, their messages too.

    A doubly linked list over seqs (``_prev``/``_next``) with a position
    per node that increases along the list (a replace takes the position of
    the first node it shadows), so finding a node, ordering two nodes and
    replacing a run cost time in the run's length, not the surface's.
    """

    def __init__(self, *, derive: bool = False) -> None:
        self.derive = derive
        self._prev: dict[int, int | None] = {}
        self._next: dict[int, int | None] = {}
        self._position: dict[int, int] = {}
        self._head: int | None = None
        self._tail: int | None = None
        self._count = 0  # positions handed out by append
        self._projections: dict[int, JsonObject | None] = {}
        self._messages: list[JsonObject] | None = []
        self._unknown: set[int] = set()  # nodes whose projection is unknown

    @property
    def history_unknown(self) -> bool:
        """Whether a node on the surface has no known projection (DERIVE-2)."""
        return bool(self._unknown)

    def mark_unknown(self, seq: int) -> None:
        """Record that node `seq` (already placed) projects to nothing known."""
        if self.derive:
            self._unknown.add(seq)

    def __len__(self) -> int:
        return len(self._position)

    @property
    def seqs(self) -> list[int]:
        """The seqs on the surface, in order (a new list)."""
        out = []
        node = self._head
        while node is not None:
            out.append(node)
            node = self._next[node]
        return out

    def append(self, seq: int, message: JsonObject | None) -> None:
        """Put `seq` at the end of the surface (SURF-3)."""
        if seq in self._position:  # a repeated seq (LOG-2): keep the first
            return
        self._prev[seq] = self._tail
        self._next[seq] = None
        if self._tail is None:
            self._head = seq
        else:
            self._next[self._tail] = seq
        self._tail = seq
        self._position[seq] = self._count
        self._count += 1
        if self.derive:
            self._projections[seq] = message
            if self._messages is not None and message is not None:
                self._messages.append(message)

    def shadowed(self, start: int, end: int) -> list[int] | ReplaceRefused:
        """The nodes a replace from `start` through `end` removes (SURF-2)."""
        for name, node in (("start", start), ("end", end)):
            if node not in self._position:
                return ReplaceRefused(
                    f"replace {name} seq {node} is not on the surface"
                )
        if self._position[start] > self._position[end]:
            return ReplaceRefused(
                f"replace start seq {start} sits after end seq {end} on the surface"
            )
        run = [start]
        while run[-1] != end:
            following = self._next[run[-1]]
            assert following is not None  # end is on the surface after start
            run.append(following)
        return run

    def replace(
        self, seq: int, shadowed: list[int], message: JsonObject | None
    ) -> None:
        """Put `seq` in place of the `shadowed` run of nodes (SURF-3)."""
        first, last = shadowed[0], shadowed[-1]
        if seq in self._position and seq not in shadowed:
            self._unlink(seq)  # a repeated seq (LOG-2): drop the old node
        before, after = self._prev[first], self._next[last]
        position = self._position[first]
        for node in shadowed:
            del self._prev[node], self._next[node], self._position[node]
        self._prev[seq], self._next[seq] = before, after
        self._position[seq] = position
        if before is None:
            self._head = seq
        else:
            self._next[before] = seq
        if after is None:
            self._tail = seq
        else:
            self._prev[after] = seq
        if self.derive:
            for node in shadowed:
                self._projections.pop(node, None)
                self._unknown.discard(node)
            self._projections[seq] = message
            self._messages = None

    def _unlink(self, node: int) -> None:
        before, after = self._prev.pop(node), self._next.pop(node)
        del self._position[node]
        if before is None:
            self._head = after
        else:
            self._next[before] = after
        if after is None:
            self._tail = before
        else:
            self._prev[after] = before

    def messages(self) -> list[JsonObject]:
        """A new list of the derived history (DERIVE-1); needs `derive`."""
        if self._messages is None:
            self._messages = [
                message
                for seq in self.seqs
                if (message := self._projections[seq]) is not None
            ]
        return list(self._messages)

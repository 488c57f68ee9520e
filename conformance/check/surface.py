"""The surface of a log being checked, and its derived history on demand.

Implements docs/spec.md SURF-2 and SURF-3 (and DERIVE-1 when asked) with
bounded memory: the surface is kept as seqs, and projected messages only
when the checker rebuilds requests (``--requests``). Nodes a replace
shadows are forgotten, so memory follows the surface, not the log. This
mirrors `reqfold.reference.session_log.SessionLog`'s incremental derivation, which
keeps every event and so cannot serve a streaming checker.

Theory of operation. The surface is two parts, one after the other: a
*linked* part and a *run* of nodes appended in increasing seq order since,
an `array` of 8 bytes a node. A log that never compacts keeps its whole
surface in the run, so its memory grows by 8 bytes a message rather than
the ~200 of a linked node (docs/checker.md, "Memory"). A replace that
reaches into the run first moves the run's nodes up to its end (those
before its start too) into the linked part; a node appended out of order
moves the whole run there, then joins it.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from dataclasses import dataclass

from reqfold.reference.json_values import JsonObject

_LOWEST, _HIGHEST = -(1 << 63), (1 << 63) - 1
"""The seqs the run's 64-bit array holds; any other goes to the linked part."""


@dataclass(frozen=True, slots=True)
class ReplaceRefused:
    """Why a replace does not apply (SURF-2)."""

    message: str


class Surface:
    """The ordered seqs on the surface; with `derive`, their messages too.

    The linked part is a doubly linked list over seqs (``_prev``/``_next``)
    with a position per node that increases along the list (a replace takes
    the position of the first node it shadows); the run (``_run``) follows
    it, its seqs increasing from ``_start`` on, so a node is found by
    bisection. Finding a node, ordering two nodes and replacing a run of
    them cost time in the replaced run's length, not the surface's; a node
    moves from the run to the links at most once (the run's front is
    dropped only once it is half the array), so a log replacing its oldest
    node again and again pays for each node once.
    """

    def __init__(self, *, derive: bool = False) -> None:
        self.derive = derive
        self._prev: dict[int, int | None] = {}
        self._next: dict[int, int | None] = {}
        self._position: dict[int, int] = {}
        self._head: int | None = None
        self._tail: int | None = None
        self._count = 0  # positions handed out to the linked part
        self._run = array("q")
        """From `_start` on, the nodes after the linked part, in increasing
        seq order (before it, nodes already moved to the links)."""
        self._start = 0
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
        return len(self._position) + len(self._run) - self._start

    @property
    def seqs(self) -> list[int]:
        """The seqs on the surface, in order (a new list)."""
        out = []
        node = self._head
        while node is not None:
            out.append(node)
            node = self._next[node]
        out.extend(self._run[self._start :])
        return out

    def _in_run(self, seq: int) -> int | None:
        """The index of `seq` in the run's array, or None."""
        run = self._run
        if len(run) == self._start or not _LOWEST <= seq <= run[-1]:
            return None
        index = bisect_left(run, seq, self._start)
        return index if run[index] == seq else None

    def append(self, seq: int, message: JsonObject | None) -> None:
        """Put `seq` at the end of the surface (SURF-3)."""
        if seq in self._position:  # a repeated seq (LOG-2): keep the first
            return
        run = self._run
        if (len(run) == self._start or seq > run[-1]) and _LOWEST <= seq <= _HIGHEST:
            run.append(seq)
        elif self._in_run(seq) is not None:  # repeated, as above
            return
        else:  # out of order or out of range: the run joins the links, then seq
            self._link_run(len(run))
            self._link(seq)
        if self.derive:
            self._projections[seq] = message
            if self._messages is not None and message is not None:
                self._messages.append(message)

    def _link(self, seq: int) -> None:
        """Put `seq` at the end of the linked part (so before the run's nodes)."""
        self._prev[seq] = self._tail
        self._next[seq] = None
        if self._tail is None:
            self._head = seq
        else:
            self._next[self._tail] = seq
        self._tail = seq
        self._position[seq] = self._count
        self._count += 1

    def _link_run(self, stop: int) -> None:
        """Move the run's nodes before index `stop` to the end of the links."""
        run, start = self._run, self._start
        for seq in run[start:stop]:
            self._link(seq)
        if stop + stop > len(run):  # at least half moved: drop the front
            del run[:stop]
            stop = 0
        self._start = stop

    def shadowed(self, start: int, end: int) -> list[int] | ReplaceRefused:
        """The nodes a replace from `start` through `end` removes (SURF-2)."""
        where = []
        for name, node in (("start", start), ("end", end)):
            if node in self._position:
                where.append((0, self._position[node]))
                continue
            index = self._in_run(node)
            if index is None:
                return ReplaceRefused(
                    f"replace {name} seq {node} is not on the surface"
                )
            where.append((1, index))
        if where[0] > where[1]:
            return ReplaceRefused(
                f"replace start seq {start} sits after end seq {end} on the surface"
            )
        (in_run, first), (_, last) = where
        if in_run:  # so is end, after it
            return self._run[first : last + 1].tolist()
        run = [start]
        while run[-1] != end:
            following = self._next[run[-1]]
            if following is None:  # end is in the run, after the linked part
                run.extend(self._run[self._start : last + 1])
                break
            run.append(following)
        return run

    def replace(
        self, seq: int, shadowed: list[int], message: JsonObject | None
    ) -> None:
        """Put `seq` in place of the `shadowed` run of nodes (SURF-3)."""
        first, last = shadowed[0], shadowed[-1]
        index = self._in_run(last)
        if index is not None:  # the run up to `last` joins the linked part
            self._link_run(index + 1)
        repeated = self._in_run(seq)
        if repeated is not None:  # a repeated seq (LOG-2): drop the old node
            del self._run[repeated]
        elif seq in self._position and seq not in shadowed:
            self._unlink(seq)
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

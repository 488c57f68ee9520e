"""The surface rules, checked on each surface event.

Implements docs/spec.md LOG-4 (a surface event carries a surfaceOp), SURF-1
(its shape, through the reference's `surface_op_problem`), SURF-2 (a
replace names a run on the surface), SURF-4 (a replace's sources name every
node it shadows) and, when rebuilding requests, DERIVE-2 (a surface event's
data projects to a message).

Theory of operation. `SurfaceRules` moves a `Surface` (seqs, and with
``--requests`` their messages) along the log. A replace, and every
compaction event, tells `explained` that the next change of the request's
opening has a cause (CACHE-2).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from msgspec import UNSET, Raw

from reqfold.conformance.check.findings import ABSENT, Finding, finding
from reqfold.conformance.check.lines import VALUE_DECODER, Envelope
from reqfold.conformance.check.surface import ReplaceRefused, Surface
from reqfold.reference.json_values import JsonObject, is_integer
from reqfold.reference.messages import derive_event_message
from reqfold.reference.session_log import surface_op_problem

COMPACTION_TYPES = frozenset({"compact/start", "compact/summary", "compact/end"})


def _nothing() -> None:
    return None


class SurfaceRules:
    """LOG-4, SURF-1, SURF-2, SURF-4 and DERIVE-2 on surface events.

    Owns `surface`; writes no field of the open step.

    Args:
        derive: keep the derived history (``--requests``).
        explained: called when the log shows why the opening may change
            next (`OpeningRules.explained`, CACHE-2).
    """

    def __init__(
        self, *, derive: bool, explained: Callable[[], None] = _nothing
    ) -> None:
        self.surface = Surface(derive=derive)
        self.derive = derive
        self._explained = explained

    @property
    def explained(self) -> Callable[[], None]:
        """What a cause of an opening change is told to: given at
        construction only (read-only), so no machine is rewired later."""
        return self._explained

    def compaction(
        self, event: Envelope, data: Any, number: int, seq: int
    ) -> Sequence[Finding]:
        """A compaction event: the opening may change next, for a reason."""
        self._explained()
        return ()

    def surface_event(
        self, event: Envelope, data: Any, number: int, seq: int
    ) -> Sequence[Finding]:
        """Apply one surface event's surfaceOp to the surface."""
        op: Any = event.surfaceOp  # decoded: `canonical.proven`, `lines`
        if op == "append" and not self.derive:  # most surface events: no
            self.surface.append(seq, None)  # message to derive, nothing to find
            return ()
        return self._surface_event(event, data, number, seq)

    def _surface_event(
        self, event: Envelope, data: Any, number: int, seq: int
    ) -> list[Finding]:
        """`surface_event`, rule by rule."""
        kind = event.type
        op: Any = event.surfaceOp
        if op is UNSET:
            return [finding("LOG-4", number, seq, f"{kind} must carry surfaceOp")]
        if isinstance(op, Raw):
            op = VALUE_DECODER.decode(op)
        out: list[Finding] = []
        surface = self.surface
        message = None
        unknown = False
        if surface.derive:
            if isinstance(data, dict):
                problem = _projection_problem(kind, data)
                if problem is None:
                    message = derive_event_message({"type": kind, "data": data})
                else:
                    unknown = True
                    out.append(finding("DERIVE-2", number, seq, problem))
            else:  # reported as LOG-3: what it projects to is unknown
                unknown = True
        if op == "append":
            surface.append(seq, message)
            if unknown:
                surface.mark_unknown(seq)
            return out
        if surface_op_problem(op) is not None:
            out.append(
                finding(
                    "SURF-1",
                    number,
                    seq,
                    'surfaceOp must be "append" or {"op": "replace", "start": S,'
                    ' "end": E} with integer seqs',
                    found=op,
                )
            )
            return out
        shadowed = surface.shadowed(int(op["start"]), int(op["end"]))
        if isinstance(shadowed, ReplaceRefused):
            out.append(finding("SURF-2", number, seq, shadowed.message, found=op))
            return out
        surface.replace(seq, shadowed, message)
        self._explained()
        if unknown:
            surface.mark_unknown(seq)
        sources = event.sourceEventSeqs
        # only integers name nodes; other elements (a list, an object) were
        # reported as LOG-5 and name nothing
        named = (
            {int(s) for s in sources if is_integer(s)}
            if isinstance(sources, list)
            else set()
        )
        missing = [node for node in shadowed if node not in named]
        if missing:
            out.append(
                finding(
                    "SURF-4",
                    number,
                    seq,
                    "a replace's sourceEventSeqs should include every node it shadows",
                    expected=shadowed,
                    found=sources if isinstance(sources, list) else ABSENT,
                )
            )
        return out


def _projection_problem(kind: str, data: JsonObject) -> str | None:
    """Why a surface event's data has no DERIVE-2 projection, or None.

    The projection carries ``data.content`` into a message, whose content
    is a list of block objects; anything else cannot be rebuilt.
    """
    content = data.get("content", [])
    if isinstance(content, list) and all(type(block) is dict for block in content):
        return None
    return (
        f"{kind} content must be a list of block objects to project to a"
        " message; the derived history is unknown until it leaves the surface"
    )

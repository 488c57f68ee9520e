"""What each step sent: dispatch, REQ-2, and (with ``--requests``) the capture.

Implements docs/spec.md REQ-2 (a request needs a header in force) and,
through `Reconstruction`, the reconstruction theorem (docs/checker.md,
"--requests"): each dispatched step is compared with the next captured
request.

Theory of operation. A step *dispatches* when it has a header in force and
its own header event or a response event; the request it sent is resolved
at its first response event (`response`), or when it closes with a header
event but no response (`closed`: the request may have been sent and
aborted, or never sent; reconstruct.py, CHECK-1). Steps among the first
``seedLength`` events of a seeded log sent their requests for the session
the log was seeded from, so they take no capture.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from reqfold.conformance.check.findings import Finding, finding
from reqfold.conformance.check.lines import Envelope
from reqfold.conformance.check.opening_rules import OpeningRules
from reqfold.conformance.check.reconstruction import (
    Reconstruction,
    StepPoint,
    cache_cost,
)
from reqfold.conformance.check.surface import Surface
from reqfold.conformance.check.turn_rules import OpenStep, Position


class RequestRules:
    """REQ-2 and the requests each step sent.

    Owns the counts of dispatched steps and, of each `OpenStep`,
    ``responded``, ``resolved``, ``boundary`` and ``history_unknown``
    (it reads ``cache_warning``, which `OpeningRules` owns).

    Args:
        position: the open turn and step (written by `TurnRules`).
        opening: the header in force.
        surface: the surface, for the derived history at a step's start.
        reconstruction: the captured requests to compare, or None.
    """

    def __init__(
        self,
        position: Position,
        opening: OpeningRules,
        surface: Surface,
        reconstruction: Reconstruction | None,
    ) -> None:
        self.position = position
        self.opening = opening
        self.surface = surface
        self.reconstruction = reconstruction
        self.seed_length = 0
        """Events the storage line says were seeded from another session."""
        self.dispatched = 0
        self.unrebuilt = 0
        """Dispatched steps whose request the log cannot rebuild (header or
        history unknown), so no capture was compared with them."""

    def step_start(
        self, event: Envelope, data: Any, number: int, seq: int
    ) -> Sequence[Finding]:
        """Note the derived history at the step's start (``--requests``)."""
        step = self.position.step
        if step is not None and self.reconstruction is not None:
            if self.surface.history_unknown:
                step.history_unknown = True
            else:
                step.boundary = self.surface.messages()
        return ()

    def response(
        self, event: Envelope, data: Any, number: int, seq: int
    ) -> Sequence[Finding]:
        """A response event: the step's first one resolves its request."""
        step = self.position.step
        if step is None or step.responded:  # most are not a step's first
            return ()
        return self.first_response(step, number, seq)

    def first_response(
        self, step: OpenStep, number: int, seq: int
    ) -> Sequence[Finding]:
        """The first response of the open `step` (which has not responded),
        at `number`/`seq`: from `response`, or for an ``assistant/chunk`` the
        reader passed over, told after it."""
        step.responded = True
        fold = self.opening.fold
        if (
            self.reconstruction is None
            and step.cache_warning is None
            and not step.history_unknown
            and fold.state is not None
            and not fold.unknown
            and step.seq >= self.seed_length
        ):  # the common case, where `_dispatch` counts it and finds nothing
            step.resolved = True
            self.dispatched += 1
            return ()
        return self._dispatch(step, number, certain=True, seq=seq)

    def closed(self, step: OpenStep, number: int) -> Sequence[Finding]:
        """A step closed: if nothing resolved its request yet, resolve it now."""
        if step.resolved:
            return ()
        return self._dispatch(step, number, certain=False)

    def _dispatch(
        self, step: OpenStep, number: int, *, certain: bool, seq: int | None = None
    ) -> Sequence[Finding]:
        step.resolved = True
        reconstruction = self.reconstruction
        if reconstruction is not None:
            reconstruction.last_capture = None
        out = self._send(step, number, certain=certain, seq=seq)
        warning = step.cache_warning  # told once: the step is now resolved
        if warning is None:
            return out
        capture = reconstruction.last_capture if reconstruction is not None else None
        if capture is not None and (cost := cache_cost(capture.usage)) is not None:
            warning = replace(
                warning,
                message=f"{warning.message} The provider cached {cost} of this"
                f" request (request {capture.index}, capture line {capture.line}).",
            )
        return [*out, warning]

    def _send(
        self, step: OpenStep, number: int, *, certain: bool, seq: int | None = None
    ) -> Sequence[Finding]:
        if step.seq < self.seed_length:
            # A seeded step: its request was sent for the session the log
            # was seeded from, not captured for this one (CHECK-1).
            return ()
        fold = self.opening.fold
        header = None if fold.unknown else fold.state
        if header is None or step.history_unknown:
            out: list[Finding] = []
            if header is None and certain and not fold.unknown:
                out.append(
                    finding(
                        "REQ-2",
                        number,
                        seq,
                        f"turn {step.turn} step {step.step} sent a request with no"
                        " header in force (no request/header snapshot before it)",
                    )
                )
            if certain:
                # Counted even when the header is unreadable (a log read under
                # the wrong revision): it still sent a request (issue 10.13).
                self.dispatched += 1
                self.unrebuilt += 1
            if certain and self.reconstruction is not None:
                # It sent a request we cannot rebuild: it still takes its
                # capture, so later steps are compared with their own.
                self.reconstruction.skip(_point(step))
            return out
        if certain:
            self.dispatched += 1
        if self.reconstruction is None:
            return ()
        return self.reconstruction.dispatch(
            _point(step), header, step.boundary or [], certain=certain
        )

    def finish(self, number: int) -> list[Finding]:
        """The captured requests no step accounted for (CHECK-1)."""
        if self.reconstruction is None:
            return []
        return self.reconstruction.finish(number)


def _point(step: OpenStep) -> StepPoint:
    """Where `step` is, for the reconstruction (built only when one runs)."""
    return StepPoint(turn=step.turn, step=step.step, line=step.line, seq=step.seq)

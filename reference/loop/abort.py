"""How a turn is interrupted: the per-step abort signal, and what interrupted it.

`AgentLoop.cancel` and `AgentLoop.dispose` abort the running step's
`AbortSignal`, a one-shot flag a step's awaits can race against: listeners
receive it (a slow composing listener should honour it) and the loop races
the provider call against it. Aborting is idempotent and keeps the first
reason.

Whether an instance is running a turn, and what stopped it, is one frozen
`RunState`, replaced whole on every change (where the *log* stands in its
turns is `reqfold.reference.turns`): whether a turn runs, the running step's signal,
the `Interruption` (a cancel or a dispose) that the turn's next
checkpoint obeys, and the end reason of a turn the sink stranded.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Literal

from reqfold.reference.json_values import JsonObject


class AbortSignal:
    """A flag that flips once, with an optional reason, and can be awaited."""

    def __init__(self) -> None:
        self._aborted = False
        self._reason: str | None = None
        self._event = asyncio.Event()

    @property
    def aborted(self) -> bool:
        """Whether `abort` has been called."""
        return self._aborted

    @property
    def reason(self) -> str | None:
        """The reason given to the first `abort` call, if any."""
        return self._reason

    def abort(self, reason: str | None = None) -> None:
        """Flip the signal; later calls change nothing."""
        if self._aborted:
            return
        self._aborted = True
        self._reason = reason
        self._event.set()

    async def wait(self) -> None:
        """Return once the signal is aborted."""
        await self._event.wait()

    def __repr__(self) -> str:
        state = f"aborted({self._reason!r})" if self._aborted else "live"
        return f"AbortSignal({state})"


@dataclass(frozen=True, slots=True)
class Interruption:
    """What interrupted a turn: a cancel (``aborted``) or a dispose (``disposed``).

    A dispose outlives the turn (the instance takes no more turns) and
    overrides a cancel; a cancel keeps its first reason and ends with the
    turn.
    """

    kind: Literal["aborted", "disposed"]
    reason: str | None = None
    """The cancel's reason, if it gave one."""

    def end_reason(self) -> JsonObject:
        """The ``turn/end`` reason of a turn this interruption ended."""
        reason: JsonObject = {"kind": self.kind}
        if self.reason is not None:
            reason["reason"] = self.reason
        return reason


DISPOSED = Interruption("disposed")


@dataclass(frozen=True, slots=True, kw_only=True)
class RunState:
    """Whether an instance runs a turn, and what interrupted it (never changed)."""

    running: bool = False
    """Whether a turn is running (`AgentLoop.cancel` does nothing otherwise)."""
    signal: AbortSignal | None = None
    """The running step's abort signal, or None between steps and turns."""
    interruption: Interruption | None = None
    """What interrupted the running turn (or disposed the instance)."""
    stranded: JsonObject | None = None
    """The end reason of a turn whose closing events the sink refused: the
    turn is still open and its next closing uses this reason."""

    @property
    def disposed(self) -> bool:
        """Whether the instance was disposed."""
        return self.interruption is not None and self.interruption.kind == "disposed"


def task_cancelled() -> bool:
    """Whether the running task was cancelled (not a CancelledError raised by hand)."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0

"""The per-step abort signal: a one-shot flag a step's awaits can race against.

`AgentLoop.cancel` and `AgentLoop.dispose` abort the running step's signal;
listeners receive it (a slow composing listener should honour it) and the
loop races the provider call against it. Aborting is idempotent and keeps
the first reason.
"""

from __future__ import annotations

import asyncio


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

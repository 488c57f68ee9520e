"""Gates: a test-controlled signal that holds back a response's first byte.

A `Gate` is opened from any thread (a test, or the `/_fake/gates/NAME/open`
endpoint) and awaited from any event loop (the ASGI app, the async httpx
transport) or waited on by a blocked thread (the sync transport). It lets a
test hold a response, observe that it is pending, then release it, with no
sleeping.
"""

from __future__ import annotations

import asyncio
import threading


class Gate:
    """A one-shot latch: closed until `open()`, then open for good."""

    def __init__(self, name: str = "") -> None:
        self.name = name
        self._event = threading.Event()
        self._held = threading.Event()
        self._lock = threading.Lock()
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []

    def __repr__(self) -> str:
        state = "open" if self.is_open else "closed"
        return f"Gate({self.name!r}, {state})"

    @property
    def is_open(self) -> bool:
        """Whether `open()` has been called."""
        return self._event.is_set()

    @property
    def waiting(self) -> int:
        """How many async waiters are currently held."""
        with self._lock:
            return len(self._waiters)

    def open(self) -> None:
        """Release every current and future waiter; safe from any thread."""
        with self._lock:
            self._event.set()
            waiters, self._waiters = self._waiters, []
        for loop, future in waiters:
            loop.call_soon_threadsafe(_resolve, future)

    def reset(self) -> None:
        """Release every current waiter, then close again for future ones.

        The provider calls this on `reset(script=True)`: a gate object a test
        obtained earlier keeps working (it is the gate the name resolves to),
        and no response already held on it is orphaned.
        """
        with self._lock:
            self._event.set()  # wakes blocked threads; they return True
            waiters, self._waiters = self._waiters, []
            self._event.clear()
            self._held.clear()
        for loop, future in waiters:
            loop.call_soon_threadsafe(_resolve, future)

    async def wait(self) -> None:
        """Wait, without blocking the event loop, until the gate is open."""
        if self._event.is_set():
            return
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        with self._lock:
            if self._event.is_set():
                return
            self._waiters.append((loop, future))
            self._held.set()
        try:
            await future
        finally:
            with self._lock:
                if (loop, future) in self._waiters:
                    self._waiters.remove((loop, future))

    def wait_blocking(self, timeout: float | None = None) -> bool:
        """Block this thread until the gate opens; `False` on timeout."""
        self._held.set()
        return self._event.wait(timeout)

    def wait_until_held(self, timeout: float | None = None) -> bool:
        """Block until some response is being held by this gate.

        Lets a test observe "the response is pending" without polling;
        `False` on timeout. From async code, run it in a worker thread
        (`await asyncio.to_thread(gate.wait_until_held, 5)`).
        """
        return self._held.wait(timeout)


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)

"""Clocks for the loop: a callable returning Unix time in integer milliseconds.

The loop never reads the wall clock itself; it calls the clock it was given
for each event's ``time`` (LOG-1). Tests and the demo pass `counter_clock`
so logs are byte-for-byte reproducible.
"""

from __future__ import annotations

import time
from collections.abc import Callable

Clock = Callable[[], int]

DEMO_EPOCH_MS = 1_767_225_600_000
"""2026-01-01T00:00:00Z, the first tick of `counter_clock` by default."""


def counter_clock(start: int = DEMO_EPOCH_MS, step: int = 1) -> Clock:
    """A deterministic clock: `start`, `start + step`, ... on successive calls."""
    if start < 0 or step < 0:
        raise ValueError("a clock counts non-negative milliseconds")
    state = [start - step]

    def tick() -> int:
        state[0] += step
        return state[0]

    return tick


def wall_clock() -> int:
    """The current Unix time in milliseconds."""
    return time.time_ns() // 1_000_000

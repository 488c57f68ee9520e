"""The logical clock that cache lifetimes are measured on.

The fake never reads the wall clock: time only moves when a test (or the
`/_fake/clock/advance` endpoint) advances it, so TTL expiry is exact and
reproducible. Times are seconds as floats, starting at 0.
"""

from __future__ import annotations

import math


class LogicalClock:
    """A clock that only moves when told to."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = _finite(start, "start")

    def now(self) -> float:
        """Return the current logical time in seconds."""
        return self._now

    def advance(self, seconds: float) -> float:
        """Move the clock forward by `seconds` (>= 0) and return the new time."""
        seconds = _finite(seconds, "seconds")
        if seconds < 0:
            raise ValueError(f"the clock only moves forward; got {seconds} seconds")
        self._now += seconds
        return self._now


def _finite(value: float, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{name} must be a number, not {type(value).__name__}")
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, not {value}")
    return float(value)

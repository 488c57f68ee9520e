"""The logical clock that cache lifetimes are measured on.

The fake never reads the wall clock: time only moves when a test (or the
`/_fake/clock/advance` endpoint) advances it, so TTL expiry is exact and
reproducible. Times are seconds as floats, starting at 0, and never
beyond `MAX_TIME`.
"""

from __future__ import annotations

import math

MAX_TIME = 1e15
"""The clock's upper limit in seconds (some 31 million years): far beyond
any TTL, and small enough that times and their sums stay exact enough and
finite."""


class LogicalClock:
    """A clock that only moves when told to."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = _finite(start, "start")
        if not 0 <= self._now <= MAX_TIME:
            raise ValueError(f"start must be within 0..{MAX_TIME:g}, got {start}")

    def now(self) -> float:
        """Return the current logical time in seconds."""
        return self._now

    def advance(self, seconds: float) -> float:
        """Move the clock forward by `seconds` (>= 0) and return the new time.

        The time stays below `MAX_TIME`: an advance past it is refused and
        leaves the clock where it was.
        """
        seconds = _finite(seconds, "seconds")
        if seconds < 0:
            raise ValueError(f"the clock only moves forward; got {seconds} seconds")
        if self._now + seconds > MAX_TIME:
            raise ValueError(
                f"advancing {seconds:g} seconds from {self._now:g} would pass the "
                f"clock's limit of {MAX_TIME:g} seconds"
            )
        self._now += seconds
        return self._now


def _finite(value: float, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{name} must be a number, not {type(value).__name__}")
    try:
        number = float(value)
    except OverflowError:  # an int with hundreds of digits
        raise ValueError(f"{name} is too large (more than a double holds)") from None
    if not math.isfinite(number):
        raise ValueError(f"{name} must be finite, not {number}")
    return number

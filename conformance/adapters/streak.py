"""When to stop asking a broken implementation: failures of one kind in a row.

A run restarts a broken adapter and goes on with the next case or
scenario. An adapter broken the same way every time would make that cost a
wait per case: timing out (10 s each at the default ``--timeout``), or
exiting, or answering with a wrong id, just before the timeout (about 3
hours for the vectors). `FailureStreak` counts failures of one kind in a
row that each made the suite wait (a timeout, or at least half of
``--timeout``); at `MAX_IN_A_ROW` the run stops and says why. A failure
that costs no wait (an adapter that crashes at once on one method) costs
only a restart, and the run goes on to judge the other methods.
"""

from __future__ import annotations

from dataclasses import dataclass

from reqfold.conformance.errors import AdapterError, AdapterTimeout

MAX_IN_A_ROW = 3
"""Failures of one kind in a row, each a wait, after which the run stops."""

SLOW_SHARE = 0.5
"""A failure that came after this share of the timeout or more is a wait."""


@dataclass(slots=True)
class FailureStreak:
    """The failures in a row that made the suite wait, and of what kind.

    `timeout` is the per-request ``--timeout`` (None: only timeouts count,
    as for an in-process implementation); `unit` names what failed
    (``cases``, ``scenarios``) in the reason.
    """

    timeout: float | None
    unit: str = "cases"
    kind: str = ""
    count: int = 0

    def failed(self, error: BaseException, waited: float) -> None:
        """One failure, after `waited` seconds of waiting on the adapter."""
        timed_out = isinstance(error, AdapterTimeout)
        slow = timed_out or (
            self.timeout is not None and waited >= SLOW_SHARE * self.timeout
        )
        if not slow:
            self.succeeded()
            return
        kind = error.label if isinstance(error, AdapterError) else type(error).__name__
        self.count = self.count + 1 if kind == self.kind else 1
        self.kind = kind

    def succeeded(self) -> None:
        """An answer (or a failure that cost no wait): the streak ends."""
        self.kind, self.count = "", 0

    @property
    def reason(self) -> str | None:
        """Why the run stops here, or None while it goes on."""
        if self.count < MAX_IN_A_ROW:
            return None
        if self.kind == AdapterTimeout.label:
            return f"the adapter timed out on {self.count} {self.unit} in a row"
        return (
            f"the adapter failed the same way ({self.kind}) on {self.count}"
            f" {self.unit} in a row, each after waiting at least"
            f" {SLOW_SHARE:.0%} of the {self.timeout:g} s timeout"
        )

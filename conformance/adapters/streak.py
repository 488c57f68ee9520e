"""When to stop asking a broken implementation: failures of one kind in a row.

A run restarts a broken adapter and goes on with the next case or
scenario. An adapter broken the same way every time would make that cost a
wait per case: timing out (10 s each at the default ``--timeout``), or
exiting, or answering with a wrong id, just before the timeout (about 3
hours for the vectors). `FailureStreak` counts failures of one kind in a
row and the time the suite waited on them: three timeouts in a row, or
`MAX_IN_A_ROW` or more failures of one kind whose waits add up to
`WAIT_BUDGET` timeouts, stop the run, which says why. Failures that cost
almost no wait (an adapter that crashes at once on the cases of one method)
add up slowly, so the run goes on to judge the other methods; failing just
under any share of ``--timeout`` does not escape the budget.
"""

from __future__ import annotations

from dataclasses import dataclass

from reqfold.conformance.errors import AdapterError, AdapterTimeout

MAX_IN_A_ROW = 3
"""Failures of one kind in a row, at the least, before the run stops."""

WAIT_BUDGET = 1.5
"""The waiting, in ``--timeout``s, that failures of one kind in a row may
cost before the run stops (three failures at half the timeout each)."""


@dataclass(slots=True)
class FailureStreak:
    """The failures of one kind in a row, and the seconds waited on them.

    `timeout` is the per-request ``--timeout`` (None: only timeouts count,
    as for an in-process implementation); `unit` names what failed
    (``cases``, ``scenarios``) in the reason.
    """

    timeout: float | None
    unit: str = "cases"
    kind: str = ""
    count: int = 0
    waited: float = 0.0

    def failed(self, error: BaseException, waited: float) -> None:
        """One failure, after `waited` seconds of waiting on the adapter."""
        kind = error.label if isinstance(error, AdapterError) else type(error).__name__
        if kind != self.kind:
            self.kind, self.count, self.waited = kind, 0, 0.0
        self.count += 1
        self.waited += waited

    def succeeded(self) -> None:
        """An answer: the streak ends."""
        self.kind, self.count, self.waited = "", 0, 0.0

    @property
    def reason(self) -> str | None:
        """Why the run stops here, or None while it goes on."""
        if self.count < MAX_IN_A_ROW:
            return None
        if self.kind == AdapterTimeout.label:
            return f"the adapter timed out on {self.count} {self.unit} in a row"
        if self.timeout is None or self.waited < WAIT_BUDGET * self.timeout:
            return None
        return (
            f"the adapter failed the same way ({self.kind}) on {self.count}"
            f" {self.unit} in a row, and the suite waited {self.waited:.1f} s on"
            f" them (more than {WAIT_BUDGET:g} times the {self.timeout:g} s timeout)"
        )

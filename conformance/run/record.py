"""What one ``reqfold run`` holds while it works: every check, the notes,
the evidence and the reproductions, recorded as each part yields them.

Plain data and one method (`RunRecord.record`); the parts
(`conformance.run.parts`) fill it in, the verdict (`conformance.run.cli`) and
the reports (`reqfold.conformance.run.reporting`) read it.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from reqfold.conformance.harness.evidence import Evidence
from reqfold.conformance.interrupts import raise_if_stopped
from reqfold.conformance.outcomes import Outcome
from reqfold.conformance.report.model import Reproduction
from reqfold.conformance.run.progress import Progress
from reqfold.conformance.run.recording import Recorder
from reqfold.conformance.verdict import Check

PROBLEM_OUTCOMES = (Outcome.FAIL, Outcome.WARN, Outcome.ERROR)
"""The outcomes a run lists as they come (and a reproduction is built for)."""


@dataclass(slots=True)
class RunRecord:
    """What the parts of one ``reqfold run`` produced, as they produce it."""

    identity: dict[str, Any] = field(default_factory=dict)
    checks: list[Check] = field(default_factory=list)
    parts: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    startup_error: str | None = None
    expected: dict[str, str] = field(default_factory=dict)
    """Expected failures: check id -> reason."""
    reproductions: dict[str, Reproduction] = field(default_factory=dict)
    evidence: dict[str, Evidence] = field(default_factory=dict)
    """The evidence of each scenario run played, by ``scenario@revision``."""
    unjudged: set[str] = field(default_factory=set)
    """Ids of the vector cases that ran in a profile the verdict does not
    cover: no check of this run, but not unknown to it either."""
    impl: str | None = None
    """The ``--impl`` value, for the reproductions' commands."""
    progress: Progress = field(
        default_factory=lambda: Progress(sys.stderr, enabled=False)
    )
    recorder: Recorder = field(default_factory=Recorder)
    """The codec implementation's answers, for the reproductions."""
    show_all: bool = False
    """``--show all``: every check is printed (the progress bar steps aside)."""
    clock: Callable[[], float] = time.monotonic
    started: float = field(default_factory=time.monotonic)
    last: float = field(default_factory=time.monotonic)
    """When the previous result came (the next one's duration starts there)."""

    def record(
        self,
        check: Check,
        show: Callable[[Check], None],
        *,
        reproduce: Callable[[], Reproduction | None] | None = None,
    ) -> Check:
        """Keep one result of any part, timed, and show it.

        `reproduce` builds the failure's reproduction; it runs only for a
        result that is not a pass or a skip, and a bug in it costs the
        report its reproduction, never the run.
        """
        raise_if_stopped()
        now = self.clock()
        check = replace(check, duration=max(now - self.last, 0.0))
        self.last = now
        self.checks.append(check)
        if reproduce is not None and check.outcome in PROBLEM_OUTCOMES:
            try:
                found = reproduce()
            except Exception:  # a bug of ours: the report goes without it
                found = None
            if found is not None:
                self.reproductions[check.id] = found
        shown = self.show_all  # problems are printed at the end
        if shown:
            self.progress.clear()
        show(check)
        if shown and self.progress.enabled:
            sys.stdout.flush()
        return check

"""Sorting a run's notes into what did not run and what ran on the side.

A run's notes are mostly about what was left out (a part the
implementation does not declare, a scenario for another revision), but
one reports results: the vector profile line (``strict input validation:
340 of 340 pass, claimed``), which ran. The Markdown and HTML reports
once listed it under "Not run"; `split_notes` keeps it apart. A probe's
notes are on its evidence (what it ran, never what it left out): they go
under "Notes" (`sorted_notes`). Pure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_RESULT_NOTE = re.compile(r"^[^:]+: \d+ of \d+ pass\b")
"""A note that tallies checks that ran (`VectorReport.profile_line`)."""


def split_notes(notes: Iterable[str]) -> tuple[list[str], list[str]]:
    """The notes as (what did not run, what ran: result lines)."""
    not_run: list[str] = []
    ran: list[str] = []
    for note in notes:
        (ran if _RESULT_NOTE.match(note) else not_run).append(note)
    return not_run, ran


PROBE_TOOL = "reqfold probe"
"""The `RunReport.tool` of a probe's report."""


def sorted_notes(
    notes: Iterable[str], *, tool: str
) -> tuple[list[str], list[str], list[str]]:
    """The notes as (plain notes, what ran, what did not run): a probe's
    are all plain notes, a run's are `split_notes`."""
    if tool == PROBE_TOOL:
        return list(notes), [], []
    not_run, ran = split_notes(notes)
    return [], ran, not_run

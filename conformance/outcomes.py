"""The outcome of one check, shared by every part of the suite.

Bowtie's distinction between a wrong answer and a broken implementation:

* ``pass``: the answer is what the spec says;
* ``warn``: it differs only where the spec says SHOULD;
* ``fail``: a MUST broken;
* ``error``: no verdict: the implementation crashed, hung or broke the
  protocol, or the suite itself failed on the check;
* ``skip``: not run (the implementation does not declare its revision).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final


class Outcome(StrEnum):
    """The outcome of one check (see module docstring)."""

    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"
    ERROR = "error"
    SKIP = "skip"


MARKS = {
    Outcome.PASS: "pass ",
    Outcome.WARN: "WARN ",
    Outcome.FAIL: "FAIL ",
    Outcome.ERROR: "ERROR",
    Outcome.SKIP: "skip ",
}
"""How each outcome is shown at the start of a result line (five columns)."""

NOT_COVERED: Final = "not covered: "
"""How the message of a skipped scenario run (one not covered) begins."""

NOT_COVERED_REASON: Final = "notCovered"
"""The `Check.detail` member of a skipped scenario run that holds why it
is not covered (the feature it needs): the verdict reads it, not the
message."""

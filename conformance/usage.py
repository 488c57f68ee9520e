"""A usage error in one line, then where to read more: ``PROG: error:
MESSAGE`` and ``see 'PROG --help'``, exit status 2 (README, the exit
statuses). Said by the parser (`reqfold.conformance.cli`) and by a command
that finds its arguments wrong after parsing (``reqfold check`` with no
log)."""

from __future__ import annotations

import sys

USAGE_ERROR_STATUS = 2
"""The exit status of a usage error."""


def usage_error_text(prog: str, message: str) -> str:
    """The two lines of a usage error of `prog`."""
    return f"{prog}: error: {message}\nsee '{prog} --help'\n"


def say_usage_error(prog: str, message: str) -> int:
    """Say a usage error of `prog` on stderr; its exit status."""
    sys.stderr.write(usage_error_text(prog, message))
    return USAGE_ERROR_STATUS

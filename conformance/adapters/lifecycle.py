"""What every part of the suite needs around an adapter: its start, identity, failures.

`impl_problem` and `timeout_problem` check the ``--impl`` and
``--timeout`` every command that runs an implementation takes;
`codec_connector` turns an ``--impl`` value into what starts the codec
implementation (the in-process reference, or an adapter command);
`abandon` ends a connection at once when a run is cut short.

`declared_revisions` reads the revisions an ``initialize`` answer declares
(the ones the suite knows, in the order given); `describe` says in words
why an adapter broke, with the tail of its stderr: the last few lines on
one line for a per-case report (the vectors, the properties), or every
kept line below the message for a per-scenario one, where a stack trace
is worth reading.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable

from reqfold.conformance.adapters.child_env import missing_reqfold_hint
from reqfold.conformance.adapters.connection import Connection, StdioConnection
from reqfold.conformance.adapters.inprocess import DirectConnection
from reqfold.conformance.errors import AdapterError, AdapterStartupFailed
from reqfold.reference.json_values import JsonObject
from reqfold.reference.revisions import Revision

_KNOWN = {revision.value: revision for revision in Revision}

REFERENCE = "reference"
"""The ``--impl`` value that runs the reference in process."""


MAX_TIMEOUT = 86_400.0
"""The longest --timeout taken (a day): more is a typo, and overflows clocks."""


def impl_problem(impl: str) -> str | None:
    """What is wrong with an ``--impl`` value, in one line, or None."""
    if impl == REFERENCE:
        return None
    try:
        argv = shlex.split(impl)
    except ValueError as error:
        return f"--impl {impl!r} cannot be split like a shell would: {error}"
    if not argv:
        return "--impl is empty: give the adapter command (or leave --impl out)"
    return None


def timeout_problem(timeout: float) -> str | None:
    """What is wrong with a ``--timeout`` value, in one line, or None."""
    if not (0 < timeout <= MAX_TIMEOUT):  # also refuses nan
        return f"--timeout must be a number of seconds in (0, {MAX_TIMEOUT:g}]"
    return None


def abandon(connection: Connection) -> None:
    """End `connection` at once, without asking it to shut down (an interrupt)."""
    kill = getattr(connection, "kill", None)
    if callable(kill):
        kill()
    else:
        connection.close()


def codec_connector(impl: str, timeout: float) -> Callable[[], Connection]:
    """What starts (and restarts) the codec implementation `impl` names.

    ``reference`` is the reference in process; anything else is an adapter
    command, split like a shell would (the caller has checked it splits).
    """
    if impl == REFERENCE:
        return DirectConnection
    argv = shlex.split(impl)
    return lambda: StdioConnection(argv, timeout=timeout)


def declared_revisions(identity: JsonObject) -> list[Revision]:
    """The known revisions an ``initialize`` result declares, in its order."""
    names = identity.get("revisions")
    if not isinstance(names, list):
        return []
    return [_KNOWN[name] for name in names if isinstance(name, str) and name in _KNOWN]


def describe(
    error: BaseException, stderr_tail: str = "", *, whole_tail: bool = False
) -> str:
    """An adapter failure in words, with the tail of the adapter's stderr.

    `stderr_tail` stands in when the error carries none (one the suite
    raised rather than the connection). By default the last three lines
    follow the message on its line; with `whole_tail` every kept line
    follows it, indented, one per line.
    """
    if not isinstance(error, AdapterError):  # a bug of the suite: its name helps
        return f"{type(error).__name__}: {error}"
    name = error.label
    tail = error.stderr_tail or stderr_tail
    hint = missing_reqfold_hint(tail) if isinstance(error, AdapterStartupFailed) else ""
    if whole_tail:
        return f"{name}: {error.detail}{hint}{stderr_block(tail)}"
    lines = [line for line in tail.strip().splitlines() if line.strip()]
    if not lines:
        return f"{name}: {error.detail}{hint}"
    return f"{name}: {error.detail}{hint} [stderr: {' | '.join(lines[-3:])}]"


def stderr_block(tail: str) -> str:
    """Every kept line of an adapter's stderr, indented below a heading ("" if none)."""
    lines = [line for line in tail.strip().splitlines() if line.strip()]
    if not lines:
        return ""
    shown = "\n".join(f"  {line}" for line in lines)
    return f"\nthe adapter's stderr ended with:\n{shown}"

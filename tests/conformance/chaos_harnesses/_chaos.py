"""Serve the reference harness adapter with one twist.

Each chaos harness in this folder is a script that calls `serve` with a
`HarnessServer` subclass (or patches the stdio shell first); everything it
does not break behaves like ``python -m reqfold.reference.harness_adapter``. Run as
``python tests/conformance/chaos_harnesses/NAME.py [options]``.

Two environment variables let a test watch them:

* ``REQFOLD_CHAOS_PIDS`` names a file to which every adapter process (the
  one that answered ``initialize`` plays the first scenario; then one per
  restart) and every helper
  process one starts appends a line ``PID ROLE`` (``adapter``, ``helper``,
  or ``escaped`` for a helper that left the adapter's process group), so
  the test can prove that none survives the run;
* ``REQFOLD_CHAOS_ONCE`` names a marker file: when set, a twist guarded by
  `first_time` happens in the first process to reach it only (the marker
  survives restarts), so a test can show that the run goes on after it.
"""

from __future__ import annotations

import os
import sys
from typing import Any, NoReturn

from reqfold.reference.shells import harness_adapter
from reqfold.reference.shells.harness_adapter import HarnessServer

PIDS = "REQFOLD_CHAOS_PIDS"
ONCE = "REQFOLD_CHAOS_ONCE"

HARNESS_METHODS = frozenset(
    (
        "session/open",
        "instance/start",
        "instance/send",
        "instance/cancel",
        "instance/dispose",
        "instance/inject",
        "instance/update",
        "instance/compact",
        "contributor/release",
    )
)


def record_pid(pid: int, role: str) -> None:
    """Append ``pid role`` to the file ``REQFOLD_CHAOS_PIDS`` names, when set."""
    path = os.environ.get(PIDS)
    if not path:
        return
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, f"{pid} {role}\n".encode())
    finally:
        os.close(fd)


def first_time() -> bool:
    """Whether this is the first time any process of the run got here.

    Always True unless ``REQFOLD_CHAOS_ONCE`` is set; then True only for
    the process that creates the marker file it names.
    """
    path = os.environ.get(ONCE)
    if not path:
        return True
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
    except FileExistsError:
        return False
    return True


def say(text: str) -> None:
    """One line on stderr, the adapter's own log (the suite keeps its tail)."""
    sys.stderr.write(f"chaos: {text}\n")
    sys.stderr.flush()


def write_stdout(data: bytes) -> None:
    """Raw bytes on stdout, flushed (the stdio shell writes there too)."""
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def option(name: str, default: str) -> str:
    """The value after ``--name`` on the command line, else `default`."""
    argv = sys.argv[1:]
    flag = f"--{name}"
    if flag in argv and argv.index(flag) + 1 < len(argv):
        return argv[argv.index(flag) + 1]
    return default


def serve(server_class: type[HarnessServer] = HarnessServer, **_: Any) -> NoReturn:
    """Record this process's pid, then serve stdin/stdout with `server_class`."""
    record_pid(os.getpid(), "adapter")
    raise SystemExit(harness_adapter.main([], server_class=server_class))

"""Finding and killing every process an adapter started, wherever it went.

An adapter runs in a session and process group of its own, but a helper it
starts may leave both (``setsid``, a daemon's double fork) and then outlive
it, holding the adapter's pipes open. Process groups cannot find such a
helper and cgroups need privileges, so the suite marks the tree instead
(the approach of Jenkins' process tree killer), and looks in ``/proc``:

* the adapter's environment carries a variable whose name is unique to
  this adapter (`marker`); every descendant inherits it, whatever session
  or parent it ends up with;
* a process of the same user that holds one of the adapter's pipes belongs
  to it too, even if it cleared its environment.

`kill_tree` stops every such process first (a stopped process cannot fork
a new one), looks again until nothing new turns up, then kills them all.
Only a process that both clears its environment and closes the pipes
escapes, and it can no longer disturb the run. Without ``/proc`` (not
Linux) only the process group is killed.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
from collections.abc import Collection, Iterator
from pathlib import Path

PROC = Path("/proc")
MAX_ROUNDS = 50
"""Scans of /proc before giving up on a tree that keeps growing."""


def marker() -> tuple[str, str]:
    """A fresh environment variable (name, value) that marks one adapter's tree."""
    return f"REQFOLD_ADAPTER_TREE_{secrets.token_hex(8)}", "1"


def pipe_inode(fd: int) -> int:
    """The inode that names the pipe `fd` is an end of (as /proc shows it)."""
    return os.fstat(fd).st_ino


def kill_tree(pgid: int, mark: str, pipes: Collection[int]) -> list[int]:
    """SIGKILL the process group `pgid` and every process marked with `mark`
    or holding one of `pipes` (pipe inodes); returns the pids found by marks."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGSTOP)
    stopped: list[int] = []
    seen: set[int] = set()
    for _ in range(MAX_ROUNDS):
        new = [pid for pid in _members(mark, pipes) if pid not in seen]
        if not new:
            break
        for pid in new:
            seen.add(pid)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGSTOP)
                stopped.append(pid)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
    for pid in stopped:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    return stopped


def _members(mark: str, pipes: Collection[int]) -> Iterator[int]:
    """Processes of this user, other than this one, marked or holding a pipe."""
    needle = f"\0{mark}=".encode()
    links = {f"pipe:[{inode}]" for inode in pipes}
    me, uid = os.getpid(), os.getuid()
    try:
        with os.scandir(PROC) as listing:
            entries = list(listing)
    except OSError:  # no /proc: only the process group is killed
        return
    for entry in entries:
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            if entry.stat().st_uid != uid:
                continue
            environ = b"\0" + (PROC / entry.name / "environ").read_bytes()
            if needle in environ or _holds(PROC / entry.name / "fd", links):
                yield int(entry.name)
        except OSError:  # gone meanwhile, or not ours to look at
            continue


def _holds(fds: Path, links: Collection[str]) -> bool:
    if not links:
        return False
    with os.scandir(fds) as entries:
        for fd in entries:
            with contextlib.suppress(OSError):
                if os.readlink(fd.path) in links:
                    return True
    return False

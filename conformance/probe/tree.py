"""A process tree, found and ended through /proc (Linux).

A harness may start helpers, and a helper may start a session of its own
(``setsid``), out of reach of a process-group kill. The probe therefore
notes the harness's descendants while it runs (`ProcessTree.scan`: each
process whose parent is in the tree, by /proc/PID/stat) and, at the end,
stops them all, looks again for anything they started meanwhile, and kills
them. A process is known by (pid, start time), so a pid reused by an
unrelated process is never signalled.

Limit: a descendant whose parent exited before any scan saw it (a double
fork between two scans, a quarter of a second apart) is reparented to init
and cannot be found; the process group kill still reaches it unless it
also changed session.
"""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

Ident = tuple[int, int]
"""A process: (pid, start time in clock ticks since boot)."""


def _stat(pid: int) -> tuple[int, int, str] | None:
    """(parent pid, start time, state) of `pid`, or None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text.rsplit(")", 1)[1].split()
    # fields[0] is the state, [1] the parent pid, [19] the start time.
    return int(fields[1]), int(fields[19]), fields[0]


def _parents() -> dict[int, tuple[int, int]]:
    """Every process: pid -> (parent pid, start time)."""
    table: dict[int, tuple[int, int]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return table
    for name in names:
        if not name.isdigit():
            continue
        stat = _stat(int(name))
        if stat is not None:
            table[int(name)] = (stat[0], stat[1])
    return table


class ProcessTree:
    """The processes one child started, remembered as they are seen."""

    def __init__(self, root: int) -> None:
        self.root = root
        self.known: set[Ident] = set()
        stat = _stat(root)
        if stat is not None:
            self.known.add((root, stat[1]))

    def scan(self) -> None:
        """Add every live process whose parent is already in the tree."""
        table = _parents()
        pids = {
            pid for pid, started in self.known if table.get(pid, (0, -1))[1] == started
        }
        grew = True
        while grew:
            grew = False
            for pid, (parent, started) in table.items():
                if parent in pids and pid not in pids:
                    pids.add(pid)
                    self.known.add((pid, started))
                    grew = True

    def alive(self) -> list[int]:
        """Known processes still running (zombies excluded)."""
        out = []
        for pid, started in self.known:
            stat = _stat(pid)
            if stat is not None and stat[1] == started and stat[2] != "Z":
                out.append(pid)
        return out

    def cpu_ticks(self) -> int:
        """CPU time (user and system, clock ticks) the live known processes
        used so far: flat while the harness idles."""
        total = 0
        for pid in self.alive():
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1]
            except OSError:
                continue
            parts = fields.split()
            # parts[11] is utime, [12] stime (fields 14 and 15 of stat(5)).
            total += int(parts[11]) + int(parts[12])
        return total

    def kill(self) -> None:
        """Stop every known process, find what they started, then kill them all.

        Stopped processes cannot fork, so a few rounds of scan-and-stop
        catch everything; the root's process group is killed too.
        """
        for _ in range(3):
            self.scan()
            for pid in self.alive():
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGSTOP)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.root, signal.SIGKILL)
        for pid in self.alive():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)

"""Processes in tests: a bounded wait, whether a pid is gone, a small-file child.

The tests that prove no adapter (or helper it started) outlives a run share
these; `pythonpath = ["tests/support"]` in pyproject.toml makes the module
importable as ``processes``.
"""

from __future__ import annotations

import os
import resource
import subprocess
import time
from collections.abc import Callable
from pathlib import Path


def wait_until(condition: Callable[[], bool], seconds: float = 10.0) -> bool:
    """Poll `condition` until it holds (True) or `seconds` pass (False)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def process_gone(pid: int) -> bool:
    """True once `pid` has exited (a zombie left to a non-reaping init counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


def run_with_small_files(
    argv: list[str], limit: int, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Run `argv` as a child that cannot write files larger than `limit` bytes
    (RLIMIT_FSIZE: a write past it fails with EFBIG, a full disk's stand-in).

    The child writes no bytecode: under the limit Python would write a
    truncated ``.pyc`` (its writes come up short without an error) into the
    cache every test process shares, and each later import of that module
    would fail ("marshal data too short").
    """

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))

    return subprocess.run(
        argv,
        cwd=cwd,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        preexec_fn=small_files,
    )

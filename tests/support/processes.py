"""Watching processes from tests: a bounded wait, and whether a pid is gone.

The tests that prove no adapter (or helper it started) outlives a run share
these; `pythonpath = ["tests/support"]` in pyproject.toml makes the module
importable as ``processes``.
"""

from __future__ import annotations

import os
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

"""``reqfold`` run with one of its streams on a pseudo-terminal.

The tests of what a terminal is shown (colour, the progress line) share
this; `pythonpath = ["tests/support"]` in pyproject.toml makes the module
importable as ``terminal``.
"""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

ROOT = Path(__file__).resolve().parents[2]


def xterm_environment(**env: str) -> dict[str, str]:
    """This environment as an xterm's, without ``NO_COLOR``, plus `env`."""
    environment = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM")}
    return {**environment, "TERM": "xterm", **env}


def reqfold_on_a_terminal(
    *args: str,
    stream: Literal["stdout", "stderr"] = "stdout",
    env: Mapping[str, str] | None = None,
    timeout: float = 120,
) -> tuple[int, str]:
    """``reqfold ARGS`` with `stream` on a pseudo-terminal and the other
    stream discarded; its status and what the terminal showed."""
    primary, secondary = pty.openpty()
    to_terminal = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    to_terminal[stream] = secondary
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "reqfold.conformance.cli", *args],
            stdout=to_terminal["stdout"],
            stderr=to_terminal["stderr"],
            cwd=ROOT,
            env=env,
        )
        os.close(secondary)
        shown = bytearray()
        while True:
            try:
                chunk = os.read(primary, 4096)
            except OSError:  # the terminal closed: the command is over
                break
            if not chunk:
                break
            shown += chunk
        status = process.wait(timeout=timeout)
    finally:
        os.close(primary)
    return status, shown.decode("utf-8", "replace")
